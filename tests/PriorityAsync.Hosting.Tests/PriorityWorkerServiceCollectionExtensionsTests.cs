using Microsoft.Extensions.Time.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

public sealed class PriorityWorkerServiceCollectionExtensionsTests
{
    private const string Section = "PriorityAsync:Workers:ScriptedWorker";

    [Fact]
    public async Task AddPriorityWorker_ConfigurationSection_BindsOptionsOverCodeDefaults()
    {
        var logs = new TestLoggerProvider();
        var entered = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                entered.TrySetResult(PriorityContext.CurrentLevel);
                await Task.Delay(Timeout.Infinite, token);
            },
            configuration: new()
            {
                [$"{Section}:Levels"] = "5",
                [$"{Section}:DefaultLevel"] = "3",
                [$"{Section}:StallTimeout"] = "00:00:02",
                [$"{Section}:BacklogDegradedThreshold"] = "100",
            },
            configure: o =>
            {
                o.Levels = 2;
                o.IdleSpinCount = 7;
            });

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();

        (await entered.Task.Within("ExecuteAsync to start")).Should().Be(3);
        worker.PriorityContext.Levels.Should().Be(5, "configuration is bound after the code's settings");
        worker.Name.Should().Be(nameof(ScriptedWorker));
        worker.PriorityContext.Name.Should().Be(nameof(ScriptedWorker));
        PriorityWorkerOptions options = host.Services.GetRequiredService<IOptionsMonitor<PriorityWorkerOptions>>().Get(nameof(ScriptedWorker));
        options.StallTimeout.Should().Be(TimeSpan.FromSeconds(2));
        options.BacklogDegradedThreshold.Should().Be(100);
        options.IdleSpinCount.Should().Be(7, "a setting the configuration leaves alone keeps the code's value");
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task AddPriorityWorker_NameAndTimeProviderInTheOptions_OverTheWorkersNameAndTheRegisteredClock()
    {
        var logs = new TestLoggerProvider();
        var registered = new FakeTimeProvider();
        var own = new FakeTimeProvider();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) => await Task.Delay(Timeout.Infinite, token),
            configuration: new() { [$"{Section}:Name"] = "from configuration" },
            configure: o => o.TimeProvider = own,
            more: builder => builder.Services.AddSingleton<TimeProvider>(registered));

        await host.StartAsync().Within("host start");
        PriorityContext context = host.Worker().PriorityContext;
        context.Name.Should().Be("from configuration", "PrioritySchedulerOptions.Name, bound like any other key, names the scheduler");
        long before = own.GetTimestamp();
        own.Advance(TimeSpan.FromSeconds(5));
        context.TimeProvider.GetTimestamp().Should().Be(before + (long)(5 * own.TimestampFrequency), "the options' own clock, not the registered one");
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public void AddPriorityWorker_EmptyStallTimeout_TurnsStallDetectionOff()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configuration: new() { [$"{Section}:StallTimeout"] = "" });

        PriorityWorkerOptions options = host.Services.GetRequiredService<IOptionsMonitor<PriorityWorkerOptions>>().Get(nameof(ScriptedWorker));

        options.StallTimeout.Should().BeNull();
        new PriorityWorkerOptions().StallTimeout.Should().Be(TimeSpan.FromSeconds(10), "the default is on");
    }

    [Theory]
    [InlineData("Levels", "0", "PriorityAsync:Workers:ScriptedWorker:Levels is 0; it must be between 1 and 64.")]
    [InlineData("Levels", "65", "PriorityAsync:Workers:ScriptedWorker:Levels is 65; it must be between 1 and 64.")]
    [InlineData("DefaultLevel", "3", "PriorityAsync:Workers:ScriptedWorker:DefaultLevel is 3; it must be between 0 and 2 (Levels is 3).")]
    [InlineData("DefaultLevel", "-1", "PriorityAsync:Workers:ScriptedWorker:DefaultLevel is -1; it must be between 0 and 2 (Levels is 3).")]
    [InlineData("StallTimeout", "00:00:00.001", "PriorityAsync:Workers:ScriptedWorker:StallTimeout is 00:00:00.0010000; it must be null (off) or between 00:00:00.0100000 and 1.00:00:00.")]
    [InlineData("BacklogDegradedThreshold", "0", "PriorityAsync:Workers:ScriptedWorker:BacklogDegradedThreshold is 0; it must be null (off) or between 1 and 2147483647.")]
    [InlineData("WorkDroppedLogInterval", "02:00:00", "PriorityAsync:Workers:ScriptedWorker:WorkDroppedLogInterval is 02:00:00; it must be between 00:00:00.0100000 and 01:00:00.")]
    [InlineData("IdleSpinCount", "10001", "PriorityAsync:Workers:ScriptedWorker:IdleSpinCount is 10001; it must be between 0 and 10000.")]
    [InlineData("TimeSlice", "00:02:00", "PriorityAsync:Workers:ScriptedWorker:TimeSlice is 00:02:00; it must be null (no quota) or between 00:00:00.0010000 and 00:01:00.")]
    public async Task StartAsync_InvalidSetting_HostDoesNotStartAndTheMessageNamesKeyValueAndRange(string key, string value, string expected)
    {
        var logs = new TestLoggerProvider();
        bool executed = false;
        using IHost host = TestHost.Build(
            logs,
            (worker, token) =>
            {
                executed = true;
                return Task.CompletedTask;
            },
            configuration: new() { [$"{Section}:{key}"] = value });

        Func<Task> start = () => host.StartAsync().Within("host start");

        (await start.Should().ThrowAsync<OptionsValidationException>()).Which.Message.Should().Contain(expected);
        executed.Should().BeFalse();
    }

    [Fact]
    public async Task AddPriorityWorker_PolicyAndTimeSlice_ReachTheWorkersContext()
    {
        var logs = new TestLoggerProvider();
        var entered = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                entered.TrySetResult(true);
                await Task.Delay(Timeout.Infinite, token);
            },
            configuration: new() { [$"{Section}:TimeSlice"] = "" },
            configure: o => o.Policy = PriorityPolicy.WeightedShares(1, 2, 4));

        await host.StartAsync().Within("host start");
        await entered.Task.Within("ExecuteAsync to start");
        ScriptedWorker worker = host.Worker();

        worker.PriorityContext.Policy.Should().BeOfType<WeightedSharesPriorityPolicy>()
            .Which.SharesPerLevel.Should().Equal(1, 2, 4);
        worker.PriorityContext.GetShares(2).Should().Be(4);
        PriorityWorkerOptions options = host.Services.GetRequiredService<IOptionsMonitor<PriorityWorkerOptions>>().Get(nameof(ScriptedWorker));
        options.TimeSlice.Should().BeNull("an empty TimeSlice turns the quota off");
        new PriorityWorkerOptions().TimeSlice.Should().Be(PrioritySchedulerOptions.DefaultTimeSlice);
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task StartAsync_PolicyWithTheWrongNumberOfLevels_HostDoesNotStartAndSaysWhy()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configuration: new() { [$"{Section}:Levels"] = "3" },
            configure: o => o.Policy = PriorityPolicy.WeightedShares(1, 2));

        Func<Task> start = () => host.StartAsync().Within("host start");

        (await start.Should().ThrowAsync<OptionsValidationException>()).Which.Message.Should().Contain(
            "PriorityAsync:Workers:ScriptedWorker:Policy is WeightedShares(1:2); it must be a policy with one value per level: 3 share counts (Levels is 3), not 2.");
    }

    [Fact]
    public async Task StartAsync_SeveralInvalidSettings_ReportsEachOne()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configuration: new() { [$"{Section}:Levels"] = "0", [$"{Section}:IdleSpinCount"] = "-1" });

        Func<Task> start = () => host.StartAsync().Within("host start");

        OptionsValidationException ex = (await start.Should().ThrowAsync<OptionsValidationException>()).Which;
        ex.Failures.Should().HaveCount(2);
        ex.Failures.Should().Contain(f => f.Contains(":Levels is 0;", StringComparison.Ordinal));
        ex.Failures.Should().Contain(f => f.Contains(":IdleSpinCount is -1;", StringComparison.Ordinal));
    }

    [Fact]
    public void AddPriorityWorker_NameWithColon_Throws()
    {
        var services = new ServiceCollection();

        Action add = () => services.AddPriorityWorker<ScriptedWorker>("a:b");

        add.Should().Throw<ArgumentException>().WithMessage("*'a:b'*':'*").Which.ParamName.Should().Be("name");
    }

    [Fact]
    public async Task AddPriorityWorker_TwoNames_RunTwoWorkersWithTheirOwnSections()
    {
        var logs = new TestLoggerProvider();
        var levels = new System.Collections.Concurrent.ConcurrentDictionary<string, int>();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                levels[worker.Name] = worker.PriorityContext.Levels;
                await Task.Delay(Timeout.Infinite, token);
            },
            configuration: new() { ["PriorityAsync:Workers:second:Levels"] = "7" },
            more: b => b.Services.AddPriorityWorker<ScriptedWorker>("second"));

        await host.StartAsync().Within("host start");
        ScriptedWorker[] workers = host.Services.GetServices<IHostedService>().OfType<ScriptedWorker>().ToArray();

        workers.Select(w => w.Name).Should().BeEquivalentTo(nameof(ScriptedWorker), "second");
        workers.Single(w => w.Name == "second").PriorityContext.Levels.Should().Be(7);
        workers.Single(w => w.Name == nameof(ScriptedWorker)).PriorityContext.Levels.Should().Be(3);
        await host.StopAsync().Within("host stop");
    }
}
