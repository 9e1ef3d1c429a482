using FrameLoop;

namespace Samples.Tests.FrameLoop;

/// <summary>
/// The FrameLoop sample. Its claims are checked on virtual time, where work advances the clock and nothing else does, so they hold
/// exactly at any machine load; on the machine's clock only what holds at any load is checked (it runs and prints both rows).
/// </summary>
public class FrameLoopTests
{
    private static readonly Settings s_virtual = new() { Virtual = true };

    [Fact]
    public void Run_OnVirtualTime_PriorityAsyncKeepsEveryFrameAndInputWithinAFrameWhileTheFifoDrainMissesFrames()
    {
        DrainResult fifo = Frames.Run(s_virtual, priority: false);
        DrainResult priority = Frames.Run(s_virtual, priority: true);

        priority.FramesOverBudget.Should().Be(0);
        priority.InputP99.Should().BeLessThanOrEqualTo(s_virtual.FramePeriod, "input drains first and whatever the budget");
        priority.WorstDrain.Should().BeLessThan(
            s_virtual.Budget + s_virtual.LongestItem + TimeSpan.FromMilliseconds(1),
            "a drain ends at most one item past its budget (plus the few input handlers, which drain whatever the budget)");
        priority.WaveMax.Should().BeLessThan(s_virtual.WavePeriod, "the background keeps moving: every wave loads before the next");

        fifo.FramesOverBudget.Should().BeGreaterThan(0, "a burst of loading continuations runs whole inside one frame");
        fifo.WorstFrame.Should().BeGreaterThan(4 * s_virtual.FramePeriod);
        fifo.InputP99.Should().BeGreaterThan(s_virtual.FramePeriod, "input queues behind the burst");
        fifo.InputMax.Should().BeGreaterThan(priority.InputMax);

        priority.Waves.Should().Be(fifo.Waves).And.BeGreaterThan(0);
        priority.BackgroundPerSecond.Should().Be(fifo.BackgroundPerSecond, "both drains run all of every wave: the same work per second");
        priority.AnimationSteps.Should().Be(fifo.AnimationSteps).And.Be(
            s_virtual.Animations * (fifo.Frames - 1), "every animation steps in every frame after the first (whose drain starts them)");
        priority.Inputs.Should().Be(fifo.Inputs);
        priority.WaveP50.Should().BeGreaterThan(fifo.WaveP50, "the price: a wave is spread over frames instead of stalling one");
    }

    [Fact]
    public void Run_OnVirtualTime_GivesTheSameFiguresEveryTime()
    {
        Frames.Run(s_virtual, priority: true).Should().Be(Frames.Run(s_virtual, priority: true));
        Frames.Run(s_virtual, priority: false).Should().Be(Frames.Run(s_virtual, priority: false));
    }

    [Fact]
    public void Main_VirtualClock_PrintsTheTableAndTheVerdictAndExitsWith0()
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Frames).Assembly, "--clock", "virtual", "--duration", "3s");

        exitCode.Should().Be(0, stdout);
        stderr.Should().BeEmpty();
        stdout.Should().Contain("on virtual time")
            .And.Contain("FIFO, everything queued (Godot's model)")
            .And.Contain("PriorityAsync, 4 ms budget")
            .And.Contain("PriorityAsync: no frame over budget: yes; input p99 within a frame (16.7 ms): yes; background moving (every wave loaded before the next): yes.");
    }

    [Fact]
    public void Main_MachineClock_RunsBothDrainsAtAnyLoad()
    {
        (int exitCode, string stdout, _) = EntryPoint.Run(typeof(Frames).Assembly, "--duration", "1.5s");

        exitCode.Should().Be(0, "on the machine's clock a loaded machine may push frames over: the verdict says so, and the run succeeded");
        stdout.Should().Contain("on the machine's clock (load average")
            .And.Contain("FIFO, everything queued (Godot's model)")
            .And.Contain("PriorityAsync, 4 ms budget");
    }

    [Theory]
    [InlineData("--budget", "20ms")]
    [InlineData("--clock", "sundial")]
    [InlineData("--drains", "lifo")]
    [InlineData("--duration", "1ms")]
    [InlineData("--frobnicate")]
    public void Main_BadArguments_PrintsOneLineOnStderrAndExitsWith2(params string[] args)
    {
        (int exitCode, string stdout, string stderr) = EntryPoint.Run(typeof(Frames).Assembly, args);

        exitCode.Should().Be(2);
        stdout.Should().BeEmpty();
        stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Should().ContainSingle().Which.Should().StartWith("FrameLoop: ");
    }
}
