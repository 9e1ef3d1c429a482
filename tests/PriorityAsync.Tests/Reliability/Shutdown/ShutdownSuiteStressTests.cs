using Xunit.Abstractions;

namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>The shutdown suite for a quarter of the stress budget per entry kind (<c>PRIORITYASYNC_STRESS_SECONDS</c>: 3 s by
/// default, 20 s on CI, as long as asked otherwise; docs/reliability.md).</summary>
[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class ShutdownSuiteStressTests(ITestOutputHelper output)
{
    public static TheoryData<EntryKind> Kinds => ShutdownSuiteTests.Kinds;

    [Theory]
    [MemberData(nameof(Kinds))]
    public void EveryEnd_Stress_NothingRunsTwiceNothingIsLostEveryTaskCompletes(EntryKind kind) =>
        ShutdownSuiteTests.RunFor(kind, StressSettings.Fraction(0.25), output);
}
