using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0001: pool timers on the loop, and the same calls off it.</summary>
public sealed class PoolTimerTests
{
    [Fact]
    public Task TaskDelay_InRunLambda_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M() => PriorityContext.Run(async () =>
            {
                await {|PA0001:Task.Delay(100)|};
            });
        }
        """);

    [Fact]
    public Task TaskDelay_OffLoop_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            async Task M()
            {
                await Task.Delay(100);
            }
        }
        """);
}
