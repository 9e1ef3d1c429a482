using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

/// <summary>A worker on a <see cref="PriorityThreadPool"/>, in the real Generic Host.</summary>
public sealed class PriorityThreadPoolBackgroundServiceTests
{
    private const string Section = "PriorityAsync:Workers:ScriptedPoolWorker";

    [Fact]
    public async Task StartAsync_ReturnsOnceThePoolRuns_ExecuteAsyncRunsOnThePoolAtTheDefaultLevel()
    {
        var logs = new TestLoggerProvider();
        var entered = new TaskCompletionSource<(PriorityThreadPool? Pool, PriorityScheduler? Scheduler, int Level)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            logs,
            async (worker, token) =>
            {
                entered.TrySetResult((PriorityThreadPool.Current, Priority.CurrentScheduler, Priority.CurrentLevel));
                await Task.Delay(Timeout.Infinite, token);
            },
            configure: o =>
            {
                o.DefaultLevel = 1;
                o.ThreadCount = 2;
            });

        await host.StartAsync().Within("host start");
        ScriptedPoolWorker worker = Worker(host);
        (PriorityThreadPool? pool, PriorityScheduler? scheduler, int level) = await entered.Task.Within("ExecuteAsync to start");

        pool.Should().BeSameAs(worker.PriorityPool);
        scheduler.Should().BeSameAs(worker.PriorityPool);
        level.Should().Be(1);
        worker.PriorityPool.ThreadCount.Should().Be(2);
        worker.PriorityPool.Name.Should().Be(nameof(ScriptedPoolWorker));
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Running);
        worker.ExecuteTask!.IsCompleted.Should().BeFalse();
        logs.Entries.Should().Contain(e => e.EventId.Id == PriorityWorkerEventIds.Started.Id);

        await host.StopAsync().Within("host stop");
        worker.ExecuteTask.IsCanceled.Should().BeTrue("ExecuteAsync ended with the stopping token's OperationCanceledException");
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Completed);
        logs.Entries.Should().Contain(e => e.EventId.Id == PriorityWorkerEventIds.Stopped.Id);
        logs.Entries.Should().NotContain(e => e.Level >= LogLevel.Warning);
    }

    [Fact]
    public async Task StopAsync_ShutdownTimeoutEndsFirst_ThePoolEndsAsTheLoopDoes_ExecuteTaskCancelled()
    {
        var logs = new TestLoggerProvider();
        var never = new TaskCompletionSource();
        using IHost host = Build(logs, async (worker, token) => await never.Task);

        await host.StartAsync().Within("host start");
        ScriptedPoolWorker worker = Worker(host);
        await host.StopAsync(new CancellationToken(canceled: true)).Within("host stop");

        logs.Entries.Should().ContainSingle(e => e.EventId.Id == PriorityWorkerEventIds.StopTimedOut.Id);
        await worker.PriorityPool.Completion.Within("the pool to end once completed from outside, ExecuteAsync pending");
        await worker.ExecuteTask!.ContinueWith(_ => { }, TaskScheduler.Default).Within("the abandoned ExecuteTask to end");
        worker.ExecuteTask.IsCanceled.Should().BeTrue("the pool was completed under ExecuteAsync, which can never resume");
    }

    [Fact]
    public async Task ExecuteAsync_TwoItemsOnTwoThreads_RunAtTheSameTime()
    {
        // Each item waits for the other inside its callback: only a pool that runs both at once lets them meet.
        var logs = new TestLoggerProvider();
        var met = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            logs,
            async (worker, token) =>
            {
                using var barrier = new Barrier(2);
                int[] threads = new int[2];
                Task Meet(int i) => worker.PriorityPool.InvokeAsync(
                    () =>
                    {
                        threads[i] = Environment.CurrentManagedThreadId;
                        if (!barrier.SignalAndWait(Infrastructure.TaskExtensions.Timeout))
                        {
                            throw new TimeoutException("The other item never ran beside this one.");
                        }

                        return Task.CompletedTask;
                    },
                    level: 1);
                await Task.WhenAll(Meet(0), Meet(1));
                met.TrySetResult(threads.Distinct().Count());
            },
            configure: o => o.ThreadCount = 2);

        await host.StartAsync().Within("host start");
        int distinctThreads = await met.Task.Within("both items to meet");
        await host.StopAsync().Within("host stop");

        distinctThreads.Should().Be(2);
        Worker(host).ExecuteTask!.Status.Should().Be(TaskStatus.RanToCompletion);
    }

    [Fact]
    public async Task StopAsync_CancelsTheStoppingToken_ExecuteAsyncFinishesOnThePoolBeforeStopReturns()
    {
        var logs = new TestLoggerProvider();
        var afterCancel = new List<(bool OnPool, int Level)>();
        using IHost host = Build(logs, async (worker, token) =>
        {
            try
            {
                await Task.Delay(Timeout.Infinite, token);
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
            }

            // The list is touched by one continuation at a time (each await orders them), so it needs no lock.
            afterCancel.Add((PriorityThreadPool.Current == worker.PriorityPool, Priority.CurrentLevel));
            await worker.PriorityPool.Yield(2);
            afterCancel.Add((PriorityThreadPool.Current == worker.PriorityPool, Priority.CurrentLevel));
        });

        await host.StartAsync().Within("host start");
        await host.StopAsync().Within("host stop");

        afterCancel.Should().Equal((true, 0), (true, 2));
        Worker(host).ExecuteTask!.Status.Should().Be(TaskStatus.RanToCompletion);
        Worker(host).PriorityPool.State.Should().Be(PrioritySchedulerState.Completed);
    }

    [Fact]
    public async Task ExecuteAsyncFaults_DefaultExceptionBehavior_StopsTheHost()
    {
        var logs = new TestLoggerProvider();
        using IHost host = Build(logs, async (worker, token) =>
        {
            await worker.PriorityPool.Yield(1);
            throw new InvalidOperationException("boom");
        });
        var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() => stopping.TrySetResult());

        await host.StartAsync().Within("host start");
        await stopping.Task.Within("the host to stop itself");

        ScriptedPoolWorker worker = Worker(host);
        worker.ExecuteTask!.IsFaulted.Should().BeTrue();
        worker.ExecuteTask.Exception!.InnerException.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be("boom");
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>("the host rethrows a BackgroundService's fault under StopHost")).WithMessage("boom");
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Completed, "a fault of ExecuteAsync is the host's business; the pool itself ends normally");
    }

    [Fact]
    public async Task HostsTimeProviderThrows_AsThePoolFiresItsTimers_ExecuteTaskFaultsWithIt_AndTheHostStops()
    {
        // The pool's timers run on the host's registered clock: a clock that throws faults the pool (and so ExecuteTask) with its
        // own exception. It used to escape the pool thread that fired the timers and end the process.
        var logs = new TestLoggerProvider();
        var clock = new BreakableClock();
        var failure = new InvalidOperationException("the clock broke");
        var armed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            logs,
            async (worker, token) =>
            {
                using ITimer timer = worker.PriorityPool.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromMinutes(1), Timeout.InfiniteTimeSpan);
                armed.SetResult();
                await Task.Delay(Timeout.Infinite, token); // not on the pool: ExecuteAsync ends only when the host stops it
            },
            clock: clock);
        var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() => stopping.TrySetResult());

        await host.StartAsync().Within("host start");
        await armed.Task.Within("the delay to be armed");
        clock.Failure = failure;
        clock.Advance(TimeSpan.FromMinutes(1));
        await stopping.Task.Within("the host to stop itself");

        ScriptedPoolWorker worker = Worker(host);
        worker.ExecuteTask!.Exception!.InnerException.Should().BeSameAs(failure);
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Faulted);
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(failure);
    }

    [Fact]
    public async Task AddPriorityThreadPoolWorker_ConfigurationSetsThreadsAndCaps_ReachThePool()
    {
        var logs = new TestLoggerProvider();
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            logs,
            (worker, token) =>
            {
                entered.TrySetResult();
                return Task.CompletedTask;
            },
            configuration: new()
            {
                [$"{Section}:Levels"] = "2",
                [$"{Section}:ThreadCount"] = "2",
                [$"{Section}:MaxConcurrencyPerLevel:0"] = "1",
                [$"{Section}:MaxConcurrencyPerLevel:1"] = "2",
            });

        await host.StartAsync().Within("host start");
        await entered.Task.Within("ExecuteAsync to start");
        PriorityThreadPool pool = Worker(host).PriorityPool;

        (pool.Levels, pool.ThreadCount, pool.GetMaxConcurrency(0), pool.GetMaxConcurrency(1)).Should().Be((2, 2, 1, 2));
        await host.StopAsync().Within("host stop");
    }

    [Theory]
    [InlineData("ThreadCount", "0", "PriorityAsync:Workers:ScriptedPoolWorker:ThreadCount is 0; it must be between 1 and 256.")]
    [InlineData("ThreadCount", "257", "PriorityAsync:Workers:ScriptedPoolWorker:ThreadCount is 257; it must be between 1 and 256.")]
    [InlineData("MaxConcurrencyPerLevel:0", "1", "PriorityAsync:Workers:ScriptedPoolWorker:MaxConcurrencyPerLevel is 1 values; it must be null (no cap) or one value per level: 3 values (Levels is 3).")]
    public async Task StartAsync_InvalidPoolSetting_HostRefusesToStartNamingKeyValueAndRange(string key, string value, string expected)
    {
        var logs = new TestLoggerProvider();
        bool executed = false;
        using IHost host = Build(
            logs,
            (worker, token) =>
            {
                executed = true;
                return Task.CompletedTask;
            },
            configuration: new() { [$"{Section}:{key}"] = value, [$"{Section}:ThreadCount"] = key == "ThreadCount" ? value : "2" });

        Func<Task> start = () => host.StartAsync().Within("host start");

        (await start.Should().ThrowAsync<OptionsValidationException>()).Which.Message.Should().Contain(expected);
        executed.Should().BeFalse();
    }

    [Fact]
    public async Task StartAsync_CapAboveTheThreadCount_HostRefusesToStart()
    {
        var logs = new TestLoggerProvider();
        using IHost host = Build(
            logs,
            (worker, token) => Task.CompletedTask,
            configure: o =>
            {
                o.ThreadCount = 2;
                o.MaxConcurrencyPerLevel = [1, 2, 3];
            });

        Func<Task> start = () => host.StartAsync().Within("host start");

        (await start.Should().ThrowAsync<OptionsValidationException>()).Which.Message.Should().Contain(
            "PriorityAsync:Workers:ScriptedPoolWorker:MaxConcurrencyPerLevel:2 is 3; it must be between 1 and ThreadCount (2).");
    }

    [Fact]
    public async Task HealthCheck_PoolWorkerRunning_ReportsItHealthyWithItsPendingWork()
    {
        var logs = new TestLoggerProvider();
        using IHost host = Build(logs, (worker, token) => Task.Delay(Timeout.Infinite, token), configure: o => o.ThreadCount = 2);

        await host.StartAsync().Within("host start");
        HealthReport report = await host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync().Within("the health check");
        await host.StopAsync().Within("host stop");

        HealthReportEntry entry = report.Entries["priority-workers"];
        entry.Status.Should().Be(HealthStatus.Healthy);
        entry.Data[nameof(ScriptedPoolWorker)].Should().Be("running");
        entry.Data[nameof(ScriptedPoolWorker) + ".pending"].Should().BeEquivalentTo(new[] { 0, 0, 0 });
    }

    [Fact]
    public async Task StopAsync_RootChildStillRunning_IsCancelledAndAwaitedBeforeTheWorkerStops()
    {
        var logs = new TestLoggerProvider();
        var childCancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var releaseChild = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var childStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var childEnded = false;
        using IHost host = Build(
            logs,
            async (worker, token) =>
            {
                Priority.Start(async childToken =>
                {
                    childStarted.SetResult();
                    try
                    {
                        await Task.Delay(Timeout.Infinite, childToken);
                    }
                    catch (OperationCanceledException)
                    {
                        childCancelled.SetResult();
                        await releaseChild.Task; // cleanup still running after the stop began
                        await Priority.Yield();
                        Volatile.Write(ref childEnded, true);
                        throw;
                    }
                });
                await Task.Delay(Timeout.Infinite, token);
            },
            configure: o => o.ThreadCount = 2);

        await host.StartAsync().Within("host start");
        ScriptedPoolWorker worker = Worker(host);
        await childStarted.Task.Within("the child to start");

        Task stop = host.StopAsync();
        await childCancelled.Task.Within("the stopping token to cancel the child");
        stop.IsCompleted.Should().BeFalse("the child has not ended, and the worker waits for it");
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Running);

        releaseChild.SetResult();
        await stop.Within("host stop");

        Volatile.Read(ref childEnded).Should().BeTrue("the worker stopped only after its child ended");
        worker.PriorityPool.State.Should().Be(PrioritySchedulerState.Completed);
        worker.ExecuteTask!.IsCanceled.Should().BeTrue("a cancelled child is not a fault");
        logs.Entries.Should().NotContain(e => e.Level >= LogLevel.Warning);
    }

    [Fact]
    public async Task ExecuteAsyncFaults_RootChildIsCancelledAndTheFaultIsTheWorkers()
    {
        var logs = new TestLoggerProvider();
        var failure = new InvalidOperationException("entry failed");
        var childCancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = Build(
            logs,
            async (worker, token) =>
            {
                Priority.Start(async childToken =>
                {
                    try
                    {
                        await Task.Delay(Timeout.Infinite, childToken);
                    }
                    catch (OperationCanceledException)
                    {
                        childCancelled.SetResult();
                        throw;
                    }
                });
                await Priority.Yield();
                throw failure;
            },
            configure: o => o.ThreadCount = 2);

        await host.StartAsync().Within("host start");
        ScriptedPoolWorker worker = Worker(host);

        await childCancelled.Task.Within("ExecuteAsync's fault to cancel the child");
        Func<Task> executing = () => worker.ExecuteTask!.Within("the worker");
        (await executing.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(failure);
        await worker.PriorityPool.Completion.Within("the pool to end once the child ended");
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>("the host rethrows a BackgroundService's fault under StopHost"))
            .Which.Should().BeSameAs(failure);
    }

    private static ScriptedPoolWorker Worker(IHost host) => host.Services.GetServices<IHostedService>().OfType<ScriptedPoolWorker>().Single();

    private static IHost Build(
        TestLoggerProvider logs,
        Func<ScriptedPoolWorker, CancellationToken, Task> script,
        Dictionary<string, string?>? configuration = null,
        Action<PriorityWorkerOptions>? configure = null,
        TimeProvider? clock = null)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        if (clock is not null)
        {
            builder.Services.AddSingleton(clock);
        }

        builder.Configuration.AddInMemoryCollection(configuration ?? []);
        builder.Logging.ClearProviders();
        builder.Logging.SetMinimumLevel(LogLevel.Debug);
        builder.Logging.AddProvider(logs);
        builder.Services.AddSingleton(new PoolWorkerScript(script));
        builder.Services.AddPriorityThreadPoolWorker<ScriptedPoolWorker>(configure);
        builder.Services.AddHealthChecks().AddCheck<PriorityWorkersHealthCheck>("priority-workers");
        return builder.Build();
    }

    /// <summary>A fake clock whose <see cref="GetTimestamp"/> throws <see cref="Failure"/> once it is set: a buggy host clock.</summary>
    private sealed class BreakableClock : TimeProvider
    {
        private readonly FakeTimeProvider _time = new();

        public Exception? Failure { get; set; }

        public override long TimestampFrequency => _time.TimestampFrequency;

        public override long GetTimestamp() => Failure is { } failure ? throw failure : _time.GetTimestamp();

        public override DateTimeOffset GetUtcNow() => _time.GetUtcNow();

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period) =>
            _time.CreateTimer(callback, state, dueTime, period);

        public void Advance(TimeSpan delta) => _time.Advance(delta);
    }
}
