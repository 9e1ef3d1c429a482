using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>
/// The shutdown suite: every way a scheduler is consumed (<see cref="EntryKind"/>), ended every way (<see cref="EndKind"/>) while
/// producers use every entry point; the checks are <see cref="ShutdownRound"/>'s. Here a fixed set of seeds, each end twice per kind;
/// <see cref="ShutdownSuiteStressTests"/> runs fresh seeds for as long as the stress budget says. A failing round prints its seed
/// and the command that replays it (<see cref="ReplayVariable"/>).
/// </summary>
public sealed class ShutdownSuiteTests(ITestOutputHelper output)
{
    /// <summary>Set to <c>Kind:seed</c> (as a failure prints it) to run that one round instead of the fixed set.</summary>
    public const string ReplayVariable = "PRIORITYASYNC_SHUTDOWN_REPLAY";

    public static TheoryData<EntryKind> Kinds => [.. Enum.GetValues<EntryKind>()];

    [Theory]
    [MemberData(nameof(Kinds))]
    public void EveryEnd_WhileProducersUseEveryEntryPoint_NothingRunsTwiceNothingIsLostEveryTaskCompletes(EntryKind kind)
    {
        var totals = new ShutdownTotals();
        var failures = new List<string>();
        if (Replay() is { } replay)
        {
            if (replay.Kind == kind)
            {
                AddIfFailed(failures, ShutdownRound.Run(kind, replay.Seed, totals));
            }
        }
        else
        {
            int rounds = 2 * ShutdownRound.EndsOf(kind).Length;
            for (int i = 0; i < rounds; i++)
            {
                AddIfFailed(failures, ShutdownRound.Run(kind, ((int)kind * 1_000) + i, totals));
            }
        }

        output.WriteLine($"{kind}: {totals}");
        failures.Should().BeEmpty();
    }

    /// <summary>Runs rounds of <paramref name="kind"/> from fresh seeds for <paramref name="budget"/> (every failing round is kept, and
    /// the figures printed, so that a run counts how often rounds fail).</summary>
    internal static void RunFor(EntryKind kind, TimeSpan budget, ITestOutputHelper output)
    {
        var totals = new ShutdownTotals();
        var failures = new List<string>();
        int first = Random.Shared.Next(1_000_000, int.MaxValue / 2);
        var stopwatch = Stopwatch.StartNew();
        int seed = first;
        while (stopwatch.Elapsed < budget)
        {
            AddIfFailed(failures, ShutdownRound.Run(kind, seed++, totals));
        }

        output.WriteLine($"{kind}: seeds {first} to {seed - 1}, {stopwatch.Elapsed.TotalSeconds:F1} s: {totals}");
        foreach (string failure in failures.Take(5))
        {
            output.WriteLine(failure);
        }

        failures.Should().BeEmpty($"{failures.Count} of {totals.Rounds} rounds failed (the first five are printed above)");
    }

    private static void AddIfFailed(List<string> failures, string? failure)
    {
        if (failure is not null)
        {
            failures.Add(failure);
        }
    }

    private static (EntryKind Kind, int Seed)? Replay()
    {
        string? value = Environment.GetEnvironmentVariable(ReplayVariable);
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }

        string[] parts = value.Split(':');
        if (parts.Length != 2 || !Enum.TryParse(parts[0], out EntryKind kind) || !int.TryParse(parts[1], out int seed))
        {
            throw new InvalidOperationException($"{ReplayVariable} must be Kind:seed, as a failure prints it (for example HostDriven:1234), not '{value}'.");
        }

        return (kind, seed);
    }
}
