namespace LeaseWorker.Tests;

public class CommandLineTests
{
    [Fact]
    public void TryParse_NoArguments_GivesTheSeedRatiosAndAllFourModes()
    {
        CommandLine.TryParse([], out Options options, out _, out string? error).Should().BeTrue(error);

        options!.Modes.Should().Equal("threadpool", "single", "seed-prioritize", "priority");
        Settings s = options.Settings;
        (s.Steps, s.Cpu, s.Io, s.Receive, s.RefreshDelay, s.RefreshDuration, s.LeaseTimeout, s.CpuKind, s.Checkpoint).Should().Be(
            (10, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(250), TimeSpan.FromSeconds(2),
             TimeSpan.FromMilliseconds(250), TimeSpan.FromSeconds(5), CpuKind.Sleep, (TimeSpan?)null));
        options.Json.Should().BeFalse();
    }

    [Fact]
    public void TryParse_ModesPriorityThreads_RunsTheFifthModeOnlyWhenNamed()
    {
        CommandLine.TryParse(["--modes", "threadpool,priority-threads"], out Options options, out _, out string? error).Should().BeTrue(error);

        options!.Modes.Should().Equal("threadpool", "priority-threads");
        CommandLine.AllModes.Should().NotContain("priority-threads", "the default run is the seed's experiment and the README's table");
    }

    [Fact]
    public void TryParse_VirtualTime_RunsTheSingleThreadModesAtTheArticlesOwnDurations()
    {
        CommandLine.TryParse(["--virtual-time"], out Options options, out _, out string? error).Should().BeTrue(error);

        options!.Modes.Should().Equal(CommandLine.VirtualTimeModes).And.Equal("single", "seed-prioritize", "priority");
        options.Settings.VirtualTime.Should().BeTrue();
        options.Settings.TimeScale.Should().Be(1, "virtual time costs nothing per second: no need to scale");

        CommandLine.TryParse(["--virtual-time", "--time-scale", "0.5", "--modes", "priority"], out options, out _, out error).Should().BeTrue(error);
        (options!.Settings.TimeScale, options.Modes.Single()).Should().Be((0.5, "priority"));
    }

    [Theory]
    [InlineData("--modes", "threadpool,priority", "threadpool")]
    [InlineData("--modes", "priority-threads", "priority-threads")]
    [InlineData("--cpu-kind", "spin", "--cpu-kind")]
    [InlineData("--starve-pool", "2", "--starve-pool")]
    public void TryParse_VirtualTimeWithWhatNeedsRealTime_OneLineErrorNamingIt(string option, string value, string named)
    {
        CommandLine.TryParse(["--virtual-time", option, value], out _, out _, out string? error).Should().BeFalse();

        error.Should().Contain(named).And.Contain("--virtual-time").And.NotContain("\n");
    }

    [Theory]
    [InlineData("0", 0)]
    [InlineData("2", 2)]
    [InlineData("256", 256)]
    public void TryParse_StarvePool_SetsTheThreadsToBlock(string value, int expected)
    {
        CommandLine.TryParse(["--starve-pool", value], out Options options, out _, out string? error).Should().BeTrue(error);

        options!.Settings.StarvePool.Should().Be(expected);
    }

    [Theory]
    [InlineData("-1")]
    [InlineData("257")]
    [InlineData("many")]
    public void TryParse_StarvePoolOutOfRange_NamesTheOptionAndTheRange(string value)
    {
        CommandLine.TryParse(["--starve-pool", value], out _, out _, out string? error).Should().BeFalse();

        error.Should().Contain("--starve-pool").And.Contain(value);
    }

    [Fact]
    public void TryParse_EveryOption_IsApplied()
    {
        string[] args =
        [
            "--modes", "priority,single", "--messages", "7", "--steps=3", "--cpu", "2s", "--io", "500ms", "--cpu-kind", "spin",
            "--checkpoint", "250ms", "--receive", "100ms", "--refresh-delay", "1.5s", "--refresh", "50ms", "--lease", "4s",
            "--time-scale", "0.1", "--json",
        ];

        CommandLine.TryParse(args, out Options options, out _, out string? error).Should().BeTrue(error);

        options!.Modes.Should().Equal("priority", "single");
        options.Json.Should().BeTrue();
        options.Settings.Should().Be(new Settings
        {
            Messages = 7,
            Steps = 3,
            Cpu = TimeSpan.FromSeconds(2),
            Io = TimeSpan.FromMilliseconds(500),
            CpuKind = CpuKind.Spin,
            Checkpoint = TimeSpan.FromMilliseconds(250),
            Receive = TimeSpan.FromMilliseconds(100),
            RefreshDelay = TimeSpan.FromSeconds(1.5),
            RefreshDuration = TimeSpan.FromMilliseconds(50),
            LeaseTimeout = TimeSpan.FromSeconds(4),
            TimeScale = 0.1,
        });
        options.Settings.SlicesPerCpuPart.Should().Be(8);
    }

    [Theory]
    [InlineData("--messages 0", "--messages must be from 1 to 1000000")]
    [InlineData("--messages -3", "--messages must be from 1 to 1000000")]
    [InlineData("--messages 2000000000", "--messages must be from 1 to 1000000")]
    [InlineData("--steps 0", "--steps must be from 1 to 10000")]
    [InlineData("--messages 1000000 --steps 10000", "days of work as it runs; at most 1 day")]
    [InlineData("--cpu -1s", "--cpu must not be negative")]
    [InlineData("--io -250ms", "--io must not be negative")]
    [InlineData("--receive -1ms", "--receive must not be negative")]
    [InlineData("--refresh-delay -2s", "--refresh-delay must not be negative")]
    [InlineData("--lease -5s", "--lease must not be negative")]
    [InlineData("--checkpoint 0ms", "--checkpoint must be positive")]
    [InlineData("--checkpoint -1ms", "--checkpoint must not be negative")]
    [InlineData("--refresh-delay 0s", "--refresh-delay must be positive")]
    [InlineData("--modes threadpool,fifo", "unknown mode 'fifo'")]
    [InlineData("--modes ,", "--modes needs at least one mode")]
    [InlineData("--modes single --modes priority", "--modes is given more than once")]
    [InlineData("--trace /no/such/folder/t.json", "--trace: the folder '/no/such/folder' does not exist")]
    [InlineData("--bogus 1", "unknown option '--bogus'")]
    [InlineData("--cpu", "--cpu needs a value")]
    [InlineData("--cpu 1", "--cpu must be a duration")]
    [InlineData("--messages many", "--messages must be a whole number")]
    [InlineData("--cpu-kind burn", "--cpu-kind must be sleep or spin")]
    [InlineData("--format json", "unknown option '--format'")]
    [InlineData("--saturate 1s", "unknown option '--saturate'")]
    [InlineData("--time-scale 0", "--time-scale must be a number in (0, 10]")]
    [InlineData("--time-scale 1e308", "--time-scale must be a number in (0, 10] (got 1E+308)")]
    [InlineData("--time-scale NaN", "--time-scale must be a number")]
    [InlineData("--time-scale fast", "--time-scale must be a number")]
    [InlineData("--lease 2s", "--lease (2 s) must be longer than a refresh cycle")]
    [InlineData("--lease 2.25s", "must be longer than a refresh cycle")]
    [InlineData("--time-scale 0.001", "below the 1 ms timer resolution")]
    public void TryParse_BadArguments_FailsWithOneLineNamingTheProblem(string commandLine, string expected)
    {
        string[] args = commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries);

        CommandLine.TryParse(args, out _, out _, out string? error).Should().BeFalse();

        error.Should().Contain(expected).And.NotContain("\n");
    }

    [Fact]
    public void TryParse_TimeScaleTooSmall_SaysWhichScaleWouldDo()
    {
        CommandLine.TryParse(["--time-scale", "0.001"], out _, out _, out string? error).Should().BeFalse();

        error.Should().Contain("--time-scale 0.004 or more");
    }

    [Theory]
    [InlineData("-h")]
    [InlineData("--help")]
    public void TryParse_Help_AsksForTheUsage(string flag)
    {
        CommandLine.TryParse([flag], out _, out string? show, out _).Should().BeTrue();

        show.Should().StartWith("Description:").And.Contain("--time-scale");
    }
}
