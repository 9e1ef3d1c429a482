using System.Globalization;
using Samples.Support;
using Xunit.Abstractions;

namespace LeaseWorker.Tests;

/// <summary>
/// What the sample claims about time, proven on virtual time (<c>--virtual-time</c>): each run has a clock of its own, every CPU part
/// advances it, every wait of the worker and every reply of the bus is a timer on it, and the loop jumps it to its next timer when it
/// has nothing to run. The results are exact: the same on every machine at any load, so each claim is an equality or a bound that
/// follows from the protocol, never a margin for noise. The article's durations run unscaled (receive 250 ms, refresh every 2 s
/// taking 250 ms, lease 5 s, CPU 1 s and I/O 1 s per step), and a whole run takes milliseconds.
/// </summary>
/// <remarks>
/// The real-time runs of the sample (its README's tables, with the load they were measured at) show the same, plus what virtual time
/// cannot: the thread pool's own timing and the cost of scheduling in CPU time. <see cref="RealTimeTests"/> runs those modes and
/// asserts what holds at any load.
/// </remarks>
public class ScenarioTests
{
    private static readonly Settings s_article = new() { VirtualTime = true, TimeScale = 1 };

    private readonly ITestOutputHelper _output;

    public ScenarioTests(ITestOutputHelper output) => _output = output;

    [Theory]
    [InlineData(12, 10)]
    [InlineData(100, 20)]
    public async Task Priority_ArticleRatios_LosesNothingAndFinishesAtTheBoundPlusOneIdleReceivePerLaterMessage(int messages, int steps)
    {
        // The protocol: the receive loop (level 0) asks for a message only when nothing more urgent waits, that is when every message
        // held is in I/O. With CPU and I/O parts of equal length two messages then alternate on the thread without a gap, and each
        // later receive (250 ms) leaves the thread idle once: makespan = bound + (messages - 1) x receive, exactly (an even count of
        // messages; an odd last one would run alone, idle during its I/O parts). The bound is the least time any scheduler needs
        // (LowerBound.cs). A refresh waits at most for the CPU part that runs when its timer fires and the one that runs when its
        // reply comes back: at most 2 x 1 s late, well inside the lease's slack of 2.75 s.
        Settings settings = s_article with { Messages = messages, Steps = steps };

        ModeResult r = await RunAsync("priority", settings);

        r.Bus.Lost.Should().Be(0, Describe(r));
        r.Bus.Succeeded.Should().Be(messages);
        r.Makespan.Should().Be(r.Bound + (messages - 1) * settings.Receive, Describe(r));
        r.Bus.WorstRefreshLateness.Should().BeLessThanOrEqualTo(2 * settings.Cpu);
        r.WorstTimerLateness.Should().BeLessThanOrEqualTo(settings.Cpu, "a due timer waits at most for the CPU part running when it fires");
        r.PeakThreads.Should().Be(1);
    }

    [Theory]
    [InlineData(12, 10)]
    [InlineData(100, 20)]
    public async Task Single_ArticleRatios_LosesEveryMessageButTheLast(int messages, int steps)
    {
        // FIFO: the receive loop takes a message each time its turn comes round the one queue, so the CPU parts of every message taken
        // pile up, and each refresh waits behind all of them: the bus refuses it. Only the last message keeps its lease: by the time it
        // arrives the others have lost theirs and stopped processing, and the queue is short again. (The article's own run on a real
        // FIFO thread lost 90 of 100; on virtual time, with no machine noise, it is exactly 99.)
        Settings settings = s_article with { Messages = messages, Steps = steps };
        var timeline = new Timeline("single");

        ModeResult r = await RunAsync("single", settings, timeline);

        r.Bus.Received.Should().Be(messages);
        r.Bus.Lost.Should().Be(messages - 1, Describe(r));
        timeline.Lost.Select(l => l.Message).Distinct().Order().Should().Equal(Enumerable.Range(1, messages - 1), "the worker learns of each loss itself");
        r.Bus.WorstRefreshLateness.Should().BeGreaterThan(settings.LatenessLimit);
    }

    [Fact]
    public async Task SeedPrioritize_ArticleRatios_LosesNothingAsPriorityDoes_ButSendsItsContinuationsRoundTheQueue1457Times()
    {
        // The article's Prioritize keeps every waiting continuation going round the FIFO queue until the most urgent cookie is its own.
        // On virtual time its laps cost no time, so it keeps every lease and finishes with priority to the tick; what it costs is the
        // trips themselves: exactly 1,457 for these 120 steps (about 12 per step), where priority dispatches each continuation once.
        // Their CPU cost in real time is in the sample's README, measured.
        Settings settings = s_article with { Messages = 12, Steps = 10 };

        ModeResult seed = await RunAsync("seed-prioritize", settings);
        ModeResult priority = await RunAsync("priority", settings);

        seed.Bus.Lost.Should().Be(0, Describe(seed));
        seed.Makespan.Should().Be(priority.Makespan);
        seed.SeedLaps.Should().Be(1457);
        priority.SeedLaps.Should().BeNull();
    }

    [Theory]
    [InlineData(2, 6, 5)]
    [InlineData(4, 4, 4)]
    public async Task Priority_LongCpuPartsWithCheckpoints_LosesNothing_EachRefreshWaitsAtMostTwoSlices(int cpuSeconds, int messages, int steps)
    {
        // Whole 2 s parts cannot be saved by a single thread in the worst case (2 + 0.25 + 2 x 2 s > 5 s); 250 ms slices with a
        // checkpoint between them can: a refresh then waits at most one slice twice per cycle.
        TimeSpan slice = TimeSpan.FromMilliseconds(250);
        Settings settings = s_article with { Messages = messages, Steps = steps, Cpu = TimeSpan.FromSeconds(cpuSeconds), Checkpoint = slice };

        ModeResult r = await RunAsync("priority", settings);

        r.Bus.Lost.Should().Be(0, Describe(r));
        r.Bus.Succeeded.Should().Be(messages);
        r.Bus.WorstRefreshLateness.Should().BeLessThanOrEqualTo(2 * slice);
    }

    [Theory]
    [InlineData(1900, 6, 6)]
    [InlineData(2000, 0, 0)]
    [InlineData(2100, 0, 0)]
    public async Task WholeCpuPartsLongerThanTheLeaseCanWait_WhatIsLostDependsOnWhereTheTimersFall(int cpuMilliseconds, int priorityLost, int seedLost)
    {
        // The README's "luck of alignment", exactly: at 2 s a part is as long as the refresh delay, so a refresh timer armed at the end
        // of one part falls due at the end of the next, where the loop looks for due timers before its next item, and the first wait
        // vanishes; at 2.1 s the same holds a little later; at 1.9 s the timer falls inside the next part and every lease is lost.
        // FIFO loses every lease whatever the alignment.
        Settings settings = s_article with { Messages = 6, Cpu = TimeSpan.FromMilliseconds(cpuMilliseconds) };

        ModeResult priority = await RunAsync("priority", settings);
        ModeResult seed = await RunAsync("seed-prioritize", settings);
        ModeResult single = await RunAsync("single", settings);

        (priority.Bus.Lost, seed.Bus.Lost, single.Bus.Lost).Should().Be((priorityLost, seedLost, 6), $"{Describe(priority)}; {Describe(seed)}; {Describe(single)}");
    }

    [Fact]
    public async Task Priority_RandomSettings_WhenTwoCpuSlicesFitInTheLeasesSlack_LosesNothing_ForEverySeed()
    {
        // The protocol's guarantee, over 300 generated settings: a refresh waits at most for two CPU slices (the one running when its
        // timer fires, the one running when its reply comes back), so whenever 2 x slice fits in the lease's slack (lease - refresh
        // delay - refresh), priority loses nothing, and no refresh is later than 2 x slice. The FIFO modes account for every message
        // (on every fifth seed: the accounting is the same code in every mode).
        // A failure names its seed and the command that replays it.
        for (int seed = 1; seed <= 300; seed++)
        {
            Settings settings = Generate(new Random(seed));
            string replay = $"seed {seed}: dotnet run --project samples/LeaseWorker -- {CommandLineOf(settings)}";
            TimeSpan slice = LongestSlice(settings);

            ModeResult priority = await RunAsync("priority", settings);
            priority.Bus.Lost.Should().Be(0, $"{replay}\n  {Describe(priority)}");
            priority.Bus.WorstRefreshLateness.Should().BeLessThanOrEqualTo(2 * slice, replay);
            priority.Makespan.Should().BeGreaterThanOrEqualTo(priority.Bound, $"the bound is a lower bound; {replay}");

            foreach (string mode in seed % 5 == 0 ? ["single", "seed-prioritize"] : Array.Empty<string>())
            {
                ModeResult other = await RunAsync(mode, settings);
                other.Bus.Received.Should().Be(settings.Messages, replay);
                (other.Bus.Succeeded + other.Bus.Lost).Should().Be(other.Bus.Received, replay);
            }
        }
    }

    [Fact]
    public async Task VirtualRun_SameSettingsTwice_GivesTheSameResultToTheTick()
    {
        Settings settings = s_article with { Messages = 8, Steps = 6, Cpu = TimeSpan.FromMilliseconds(1300), Checkpoint = TimeSpan.FromMilliseconds(300) };
        foreach (string mode in CommandLine.VirtualTimeModes)
        {
            ModeResult first = await RunAsync(mode, settings);
            ModeResult second = await RunAsync(mode, settings);

            (second.Bus, second.Makespan, second.WorstTimerLateness, second.SeedLaps)
                .Should().Be((first.Bus, first.Makespan, first.WorstTimerLateness, first.SeedLaps), mode);
        }
    }

    [Theory]
    [InlineData("threadpool")]
    [InlineData(PriorityThreadsMode.ModeName)]
    public async Task VirtualRun_ModeOnSeveralThreads_IsRefusedNamingTheModesThatCan(string mode)
    {
        Func<Task> run = () => Simulation.RunAsync(mode, s_article);

        (await run.Should().ThrowAsync<ArgumentOutOfRangeException>()).Which.Message.Should().Contain("single, seed-prioritize, priority");
    }

    /// <summary>Settings within the protocol's guarantee: 2 x slice at most the lease's slack. Whole milliseconds, the article's time.</summary>
    private static Settings Generate(Random random)
    {
        TimeSpan Ms(int min, int max) => TimeSpan.FromMilliseconds(random.Next(min, max + 1));

        TimeSpan refreshDelay = Ms(200, 3000);
        TimeSpan refresh = Ms(1, 500);
        TimeSpan cpu = Ms(1, 3000);
        TimeSpan? checkpoint = random.Next(2) == 0 ? null : Ms(1, 1000);
        Settings settings = s_article with
        {
            Messages = random.Next(1, 13),
            Steps = random.Next(1, 11),
            Receive = Ms(1, 500),
            RefreshDelay = refreshDelay,
            RefreshDuration = refresh,
            Cpu = cpu,
            Io = Ms(0, 2000),
            Checkpoint = checkpoint,
        };
        TimeSpan slice = LongestSlice(settings);
        return settings with { LeaseTimeout = refreshDelay + refresh + 2 * slice + Ms(1, 1000) };
    }

    /// <summary>The longest CPU slice of a part (the worker's last one takes the rest of the division).</summary>
    private static TimeSpan LongestSlice(Settings s) => s.Cpu - (s.SlicesPerCpuPart - 1) * (s.Cpu / s.SlicesPerCpuPart);

    private static string CommandLineOf(Settings s) => string.Join(
        ' ',
        "--virtual-time --modes priority",
        $"--messages {s.Messages} --steps {s.Steps}",
        $"--cpu {Ms(s.Cpu)} --io {Ms(s.Io)} --receive {Ms(s.Receive)}",
        $"--refresh-delay {Ms(s.RefreshDelay)} --refresh {Ms(s.RefreshDuration)} --lease {Ms(s.LeaseTimeout)}",
        s.Checkpoint is { } c ? $"--checkpoint {Ms(c)}" : string.Empty);

    private static string Ms(TimeSpan value) => SampleCommandLine.FormatDuration(value);

    private async Task<ModeResult> RunAsync(string mode, Settings settings, Timeline? timeline = null)
    {
        ModeResult result = await Simulation.RunAsync(mode, settings, timeline);
        _output.WriteLine(Describe(result));
        return result;
    }

    private static string Describe(ModeResult r) => string.Create(
        CultureInfo.InvariantCulture,
        $"{r.Mode}: received {r.Bus.Received}, lost {r.Bus.Lost}, makespan {r.Makespan.TotalSeconds:0.######} s against a bound of " +
        $"{r.Bound.TotalSeconds:0.######} s, worst refresh lateness {r.Bus.WorstRefreshLateness.TotalMilliseconds:0.###} ms, " +
        $"worst timer lateness {r.WorstTimerLateness.TotalMilliseconds:0.###} ms{(r.SeedLaps is { } laps ? $", {laps} trips round the queue" : string.Empty)}");
}
