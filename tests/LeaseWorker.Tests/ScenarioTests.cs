using System.Text;
using Xunit.Abstractions;

namespace LeaseWorker.Tests;

/// <summary>
/// What the sample must show, on scaled-down runs (a few seconds each) of the seed's ratios: receive 250 ms, refresh every 2 s
/// taking 250 ms, lease 5 s, CPU 1 s / I/O 1 s per step, all at time scale 0.05 (1 s runs as 50 ms, so a lease survives a refresh
/// up to 137.5 ms late, and at CPU 1 s the scheduler's own worst case leaves 37.5 ms of that).
/// </summary>
/// <remarks>
/// Robust on a noisy 2-core machine: no absolute timings, only counts and ratios with margins, and the wall-clock-sensitive claims
/// ("nothing lost", "near the bound") get up to three attempts. Noise from other processes only ever delays the worker (more
/// lateness, a longer makespan), so a right scheduler passes in a quiet attempt while a wrong one (FIFO) fails every attempt; each
/// failure message lists every attempt, with the worst stall a bystander thread saw in it.
/// The thread pool is left as the test runner has it (its minimum is not raised): the priority mode's waits are its loop's timers,
/// so its results do not depend on the pool's health; <see cref="StarvedPoolTests"/> runs it with every pool thread blocked.
/// </remarks>
[Trait("Category", "Timing")]
public class ScenarioTests
{
    private const int Attempts = 3;

    private static readonly Settings s_seedRatios = new() { TimeScale = 0.05 };

    // JIT compilation (tiered compilation is off in this project) happens on the loop thread at first use: do it once, before any
    // measured run, rather than in the first attempt of whichever test runs first.
    private static readonly Lazy<Task> s_warmUp = new(() => Simulation.WarmUpAsync(s_seedRatios, CommandLine.AllModes));

    private readonly ITestOutputHelper _output;

    public ScenarioTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public async Task Priority_SeedRatioWithoutCheckpoints_LosesNothingAndFinishesWithin5PercentOfTheCpuBound()
    {
        Settings settings = s_seedRatios with { Messages = 12, Steps = 10 };

        ModeResult passed = await RunUntil(
            () => Simulation.RunAsync("priority", settings),
            r => r.Bus.Lost == 0 && r.MakespanOverBound <= 1.05,
            "priority at CPU 1 s / I/O 1 s: 0 lost and makespan <= 1.05 x the CPU bound");

        passed.Bus.Succeeded.Should().Be(12);
        passed.MakespanOverBound.Should().BeGreaterThan(0.98, "the bound is a lower bound (up to timer rounding)");
        passed.PeakThreads.Should().Be(1);
    }

    [Fact]
    public async Task PriorityThreads_SeedRatio_LosesNothingAndRunsTwoCpuPartsAtOnce()
    {
        // The parts sleep, as in the other scenarios: each still holds its pool thread for its whole length (so the bound counts the
        // pool's threads), but needs no core, so a loaded machine does not stretch it. The spinning run, on a quiet machine, is a
        // benchmark (docs/benchmarks.md, "Several threads").
        Settings settings = s_seedRatios with { Messages = 12, Steps = 10 };
        await Simulation.WarmUpAsync(s_seedRatios, [PriorityThreadsMode.ModeName]); // not in s_warmUp: that one warms the default modes

        ModeResult passed = await RunUntil(
            () => Simulation.RunAsync(PriorityThreadsMode.ModeName, settings),
            r => r.Bus.Lost == 0 && r.MakespanOverBound <= 1.10,
            "priority-threads: 0 lost and makespan <= 1.10 x the CPU bound of one thread per core");

        passed.Bus.Succeeded.Should().Be(12);
        passed.CpuThreads.Should().Be(Environment.ProcessorCount);
        passed.PeakThreads.Should().Be(Environment.ProcessorCount, "every pool thread runs a CPU part at once: the backlog of parts never runs dry");
    }

    [Theory]
    [InlineData(2, 6, 5)]
    [InlineData(4, 4, 4)]
    public async Task Priority_LongCpuPartsWithCheckpoints_LosesNothing(int cpuSeconds, int messages, int steps)
    {
        // Whole 2 s parts cannot be saved by any scheduler (2 + 0.25 + 2 x 2 s > 5 s); 250 ms slices with a checkpoint between them can.
        Settings settings = s_seedRatios with
        {
            Messages = messages,
            Steps = steps,
            Cpu = TimeSpan.FromSeconds(cpuSeconds),
            Checkpoint = TimeSpan.FromMilliseconds(250),
        };

        ModeResult passed = await RunUntil(
            () => Simulation.RunAsync("priority", settings),
            r => r.Bus.Lost == 0,
            $"priority at CPU {cpuSeconds} s / I/O 1 s with 250 ms checkpoints: 0 lost");

        passed.Bus.Succeeded.Should().Be(messages);
    }

    [Fact]
    public async Task Single_SeedRatio_LosesMessages()
    {
        // FIFO: the receive loop keeps taking messages, and every lease refresh waits behind all their CPU parts.
        Settings settings = s_seedRatios with { Messages = 10, Steps = 5 };

        await s_warmUp.Value;
        ModeResult result = await Simulation.RunAsync("single", settings);
        _output.WriteLine(Describe(result));

        result.Bus.Received.Should().Be(10);
        result.Bus.Lost.Should().BeGreaterThanOrEqualTo(5, Describe(result));
        result.Bus.WorstRefreshLateness.Should().BeGreaterThan(settings.Scaled(settings.LatenessLimit));
    }

    [Fact]
    public async Task SeedPrioritize_SeedRatio_LosesNothingButSendsItsContinuationsRoundTheQueue()
    {
        // The seed's Prioritize keeps a waiting continuation going round the FIFO queue until the most urgent cookie is its own:
        // scheduling work that priority does not do (it dispatches each continuation once, at its level). Checkpoints (four per
        // CPU part) give both modes more scheduling points. Asserted on the trips, which the run counts: about 1,500 here (1,263
        // to 1,942 beside other test runs), 25 per step; at least 10 per step is asserted.
        // Not asserted: the loop-thread CPU time those trips cost. Alone it is 1.9 to 3 times priority's (samples/LeaseWorker/README.md),
        // but beside the other test assemblies' stress tests (load above 10) both modes' loop-thread CPU (10 to 20 ms) moves by more
        // than the trips cost: five attempts in a row once found it within 1.4x, two within 3%.
        Settings settings = s_seedRatios with { Messages = 10, Steps = 6, Checkpoint = TimeSpan.FromMilliseconds(250) };
        long minTrips = 10L * settings.Messages * settings.Steps;

        await RunUntil<(ModeResult Seed, ModeResult Priority)>(
            async () => (await Simulation.RunAsync("seed-prioritize", settings), await Simulation.RunAsync("priority", settings)),
            p => p.Seed.Bus.Lost == 0 && p.Priority.Bus.Lost == 0 && p.Seed.SeedLaps >= minTrips,
            $"seed-prioritize: 0 lost, and at least {minTrips} trips round the queue inside its Prioritize; priority: 0 lost, for the same work",
            p => $"seed-prioritize: {Describe(p.Seed)}, {p.Seed.SeedLaps} trips\n    priority: {Describe(p.Priority)}");
    }

    private async Task<T> RunUntil<T>(Func<Task<T>> run, Func<T, bool> passes, string claim, Func<T, string>? describe = null)
    {
        await s_warmUp.Value;
        var report = new StringBuilder($"No attempt out of {Attempts} met the claim: {claim}.");
        for (int attempt = 1; attempt <= Attempts; attempt++)
        {
            T result = await run();
            string description = describe is null ? Describe(result!) : describe(result);
            _output.WriteLine($"attempt {attempt}: {description}");
            if (passes(result))
            {
                return result;
            }

            report.Append($"\n  attempt {attempt}: {description}");
        }

        throw new Xunit.Sdk.XunitException(report.ToString());
    }

    private static string Describe(object result) => result is ModeResult r
        ? $"{r.Mode}: received {r.Bus.Received}, lost {r.Bus.Lost}, makespan/bound {r.MakespanOverBound:0.000}, " +
          $"CPU time {r.CpuTime.TotalMilliseconds:0} ms (loop thread {r.LoopCpuTime?.TotalMilliseconds:0.0} ms), worst refresh lateness {r.Bus.WorstRefreshLateness.TotalMilliseconds:0.0} ms, " +
          $"bystander stall {r.MachineStall.TotalMilliseconds:0.0} ms, thread-pool delay {r.ThreadPoolDelay.TotalMilliseconds:0.0} ms"
        : result.ToString() ?? string.Empty;
}
