using System.IO;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace MessageBus.Postgres.Tests;

/// <summary>
/// The tests of this assembly that cannot run here (no PostgreSQL) are left out as a group, not skipped one by one: the runner's
/// output would list each one twice. Each reason is written, with how many tests it left out, to <c>skipped-tests.txt</c> beside the
/// assembly, which the build prints after <c>dotnet test</c> as one line per reason (Directory.Build.targets, ReportSkippedTests).
/// </summary>
internal static class SkipReport
{
    public const string FileName = "skipped-tests.txt";

    private static readonly Lock s_gate = new();
    private static readonly Dictionary<string, HashSet<string>> s_tests = new(StringComparer.Ordinal);

    /// <summary>Notes that <paramref name="test"/> is left out for <paramref name="reason"/>, and rewrites the file.</summary>
    public static void Record(string reason, string test)
    {
        lock (s_gate)
        {
            // A test may be discovered more than once in a process: each one counts once.
            if (!(s_tests.TryGetValue(reason, out HashSet<string>? tests) ? tests : s_tests[reason] = []).Add(test))
            {
                return;
            }

            File.WriteAllLines(
                Path.Combine(AppContext.BaseDirectory, FileName),
                s_tests.Select(r => $"{r.Value.Count} not run, {r.Key}"));
        }
    }
}

/// <summary>
/// Discovers a <see cref="PostgresFactAttribute"/> or <see cref="PostgresRestartFactAttribute"/> test: as a fact when it can run,
/// and as nothing, noted in the <see cref="SkipReport"/>, when its attribute says why it cannot.
/// </summary>
public sealed class LeftOutWhenSkippedDiscoverer(IMessageSink diagnosticMessageSink) : FactDiscoverer(diagnosticMessageSink)
{
    /// <inheritdoc />
    public override IEnumerable<IXunitTestCase> Discover(ITestFrameworkDiscoveryOptions discoveryOptions, ITestMethod testMethod, IAttributeInfo factAttribute)
    {
        if (factAttribute.GetNamedArgument<string>(nameof(FactAttribute.Skip)) is { } reason)
        {
            SkipReport.Record(reason, $"{testMethod.TestClass.Class.Name}.{testMethod.Method.Name}");
            return [];
        }

        return base.Discover(discoveryOptions, testMethod, factAttribute);
    }
}
