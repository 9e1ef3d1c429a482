using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting.Tests.Infrastructure;

namespace PriorityAsync.Hosting.Tests;

public sealed class PriorityBackgroundServiceTests
{
    private const string HostCategory = "Microsoft.Extensions.Hosting.Internal.Host";

    [Fact]
    public async Task StartAsync_ReturnsOnceLoopRuns_ExecuteAsyncRunsOnTheLoopAtTheDefaultLevel()
    {
        var logs = new TestLoggerProvider();
        var entered = new TaskCompletionSource<(PriorityContext? Context, int Level, int ThreadId)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                entered.TrySetResult((PriorityContext.Current, PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId));
                await Task.Delay(Timeout.Infinite, token);
            },
            configure: o => o.DefaultLevel = 1);

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        (PriorityContext? context, int level, int threadId) = await entered.Task.Within("ExecuteAsync to start");

        context.Should().BeSameAs(worker.PriorityContext);
        level.Should().Be(1);
        threadId.Should().NotBe(Environment.CurrentManagedThreadId);
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Running);
        worker.ExecuteTask.Should().NotBeNull();
        worker.ExecuteTask!.IsCompleted.Should().BeFalse();
        logs.Entries.Should().Contain(e => e.EventId.Id == PriorityWorkerEventIds.Started.Id);

        await host.StopAsync().Within("host stop");
        worker.ExecuteTask.IsCanceled.Should().BeTrue("ExecuteAsync ended with the stopping token's OperationCanceledException");
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed);
        logs.Entries.Should().NotContain(e => e.Level >= LogLevel.Warning);
    }

    [Fact]
    public async Task StopAsync_CancelsTheStoppingToken_ExecuteAsyncFinishesOnItsLoopBeforeStopReturns()
    {
        var logs = new TestLoggerProvider();
        var afterCancel = new List<(bool OnLoop, int Level)>();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                try
                {
                    await Task.Delay(Timeout.Infinite, token);
                }
                catch (OperationCanceledException) when (token.IsCancellationRequested)
                {
                }

                afterCancel.Add((PriorityContext.Current == worker.PriorityContext, PriorityContext.CurrentLevel));
                await worker.PriorityContext.Yield(2);
                afterCancel.Add((PriorityContext.Current == worker.PriorityContext, PriorityContext.CurrentLevel));
            });

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        afterCancel.Should().BeEmpty();

        await host.StopAsync().Within("host stop");

        afterCancel.Should().Equal((true, 0), (true, 2));
        worker.ExecuteTask!.Status.Should().Be(TaskStatus.RanToCompletion);
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed);
        logs.Entries.Should().Contain(e => e.EventId.Id == PriorityWorkerEventIds.Stopped.Id);
    }

    [Fact]
    public async Task StopAsync_AsyncVoidWorkStillRunning_WaitsForTheLoopToFinishIt()
    {
        var logs = new TestLoggerProvider();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool backgroundDone = false;
        using IHost host = TestHost.Build(logs, (worker, token) =>
        {
            Background();
            return Task.CompletedTask;

            async void Background()
            {
                await release.Task;
                await worker.PriorityContext.Yield(1);
                backgroundDone = true;
            }
        });

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        Task stop = host.StopAsync();
        stop.IsCompleted.Should().BeFalse("the async void method holds the loop open");
        release.SetResult();
        await stop.Within("host stop");

        backgroundDone.Should().BeTrue();
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed);
    }

    [Fact]
    public async Task StopAsync_ShutdownTimeoutEndsFirst_LogsStopTimedOutWithWhatIsStillWaiting()
    {
        var logs = new TestLoggerProvider();
        var never = new TaskCompletionSource();
        using IHost host = TestHost.Build(logs, async (worker, token) => await never.Task);

        await host.StartAsync().Within("host start");
        ScriptedWorker worker = host.Worker();
        await host.StopAsync(new CancellationToken(canceled: true)).Within("host stop");

        LogEntry entry = logs.Entries.Should().ContainSingle(e => e.EventId.Id == PriorityWorkerEventIds.StopTimedOut.Id).Subject;
        entry.Level.Should().Be(LogLevel.Warning);
        entry.Values["Worker"].Should().Be(nameof(ScriptedWorker));
        await worker.ExecuteTask!.ContinueWith(_ => { }, TaskScheduler.Default).Within("the abandoned ExecuteTask to end");
        worker.ExecuteTask.IsCanceled.Should().BeTrue("the loop was completed under ExecuteAsync, which can never resume");
    }

    [Fact]
    public async Task ExecuteAsyncFaults_DefaultExceptionBehavior_StopsTheHost()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(logs, async (worker, token) =>
        {
            await worker.PriorityContext.Yield(1);
            throw new InvalidOperationException("boom");
        });
        var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() => stopping.TrySetResult());

        await host.StartAsync().Within("host start");
        await stopping.Task.Within("the host to stop itself");

        ScriptedWorker worker = host.Worker();
        worker.ExecuteTask!.IsFaulted.Should().BeTrue();
        worker.ExecuteTask.Exception!.InnerException.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Be("boom");
        await logs.WaitForAsync(e => e.Category == HostCategory && e.Exception?.Message == "boom", "the host to log the fault");
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>("the host rethrows a BackgroundService's fault under StopHost")).WithMessage("boom");
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed, "a fault of ExecuteAsync is the host's business; the loop itself ends normally");
    }

    [Fact]
    public async Task ExecuteAsyncFaults_IgnoreExceptionBehavior_HostKeepsRunning()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                await worker.PriorityContext.Yield(1);
                throw new InvalidOperationException("boom");
            },
            more: b => b.Services.Configure<HostOptions>(o => o.BackgroundServiceExceptionBehavior = BackgroundServiceExceptionBehavior.Ignore));

        await AssertHostKeepsRunningAfterFault(host, logs, "boom");
        host.Worker().ExecuteTask!.Exception!.InnerException!.Message.Should().Be("boom");
    }

    [Fact]
    public async Task LoopUnhandledException_DefaultExceptionBehavior_LogsItAndStopsTheHost()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(logs, async (worker, token) =>
        {
            ThrowLater();
            await Task.Delay(Timeout.Infinite, token);

            async void ThrowLater()
            {
                await worker.PriorityContext.Yield(2);
                throw new InvalidOperationException("loop boom");
            }
        });
        var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() => stopping.TrySetResult());

        await host.StartAsync().Within("host start");
        await stopping.Task.Within("the host to stop itself");

        ScriptedWorker worker = host.Worker();
        LogEntry entry = await logs.WaitForAsync(e => e.EventId.Id == PriorityWorkerEventIds.UnhandledException.Id, "the UnhandledException log");
        entry.Level.Should().Be(LogLevel.Error);
        entry.Exception!.Message.Should().Be("loop boom");
        entry.Values["Level"].Should().Be(0, "an async void method reports its exception to the context it started on, level 0 here");
        entry.Category.Should().Be(PriorityWorkerServiceCollectionExtensions.LogCategory);
        worker.ExecuteTask!.Exception!.InnerException!.Message.Should().Be("loop boom");
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Faulted);
        Func<Task> stop = () => host.StopAsync().Within("host stop");
        (await stop.Should().ThrowAsync<InvalidOperationException>("the host rethrows a BackgroundService's fault under StopHost")).WithMessage("loop boom");
    }

    [Fact]
    public async Task LoopUnhandledException_IgnoreExceptionBehavior_HostKeepsRunning()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(
            logs,
            async (worker, token) =>
            {
                ThrowLater();
                await Task.Delay(Timeout.Infinite, token);

                async void ThrowLater()
                {
                    await worker.PriorityContext.Yield(2);
                    throw new InvalidOperationException("loop boom");
                }
            },
            more: b => b.Services.Configure<HostOptions>(o => o.BackgroundServiceExceptionBehavior = BackgroundServiceExceptionBehavior.Ignore));

        await AssertHostKeepsRunningAfterFault(host, logs, "loop boom");
        host.Worker().PriorityContext.State.Should().Be(PrioritySchedulerState.Faulted);
    }

    [Fact]
    public async Task StartAsync_Twice_Throws()
    {
        var logs = new TestLoggerProvider();
        using IHost host = TestHost.Build(logs, (worker, token) => Task.Delay(Timeout.Infinite, token));
        await host.StartAsync().Within("host start");

        Func<Task> again = () => host.Worker().StartAsync(CancellationToken.None);

        (await again.Should().ThrowAsync<InvalidOperationException>()).WithMessage("*ScriptedWorker*already started*");
        await host.StopAsync().Within("host stop");
    }

    [Fact]
    public async Task StopRequestedDuringTheHostsStart_AsCtrlCDoes_TheHostStartsThenStopsTheWorkerWithoutAnException()
    {
        // Ctrl+C or SIGTERM during start-up: the host's console lifetime calls StopApplication, which cancels the token the host
        // gives each hosted service's StartAsync. A service registered ahead of the worker does the same, so the worker's StartAsync
        // sees a start token that is already cancelled (the widest form of the window).
        var logs = new TestLoggerProvider();
        var executed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using IHost host = TestHost.Build(
            logs,
            (worker, token) =>
            {
                executed.TrySetResult(token.IsCancellationRequested);
                return Task.CompletedTask;
            },
            more: builder => builder.Services.Insert(0, ServiceDescriptor.Singleton<IHostedService, StopsTheApplicationAsItStarts>()));

        ScriptedWorker worker = host.Worker(); // RunAsync disposes the host's services
        await host.RunAsync().Within("the host to start and then stop, without an exception");

        (await executed.Task.Within("ExecuteAsync to run")).Should().BeTrue("its stopping token was cancelled before it started");
        worker.PriorityContext.State.Should().Be(PrioritySchedulerState.Completed);
        logs.Entries.Should().NotContain(e => e.Level >= LogLevel.Error);
    }

    // The host logs the fault, then (StopHost only) stops the application, in one synchronous step. Waiting for the fault's log and
    // then stopping the host ourselves, the ApplicationStopping callback tells who stopped it.
    private static async Task AssertHostKeepsRunningAfterFault(IHost host, TestLoggerProvider logs, string message)
    {
        bool stoppedByTest = false;
        var stoppedBy = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() => stoppedBy.TrySetResult(Volatile.Read(ref stoppedByTest)));

        await host.StartAsync().Within("host start");
        await logs.WaitForAsync(e => e.Category == HostCategory && e.Exception?.Message == message, "the host to log the fault");

        host.Worker().ExecuteTask!.IsFaulted.Should().BeTrue();
        Volatile.Write(ref stoppedByTest, true);
        await host.StopAsync().Within("host stop");
        (await stoppedBy.Task.Within("ApplicationStopping")).Should().BeTrue("with Ignore, only the test stops the host");
    }
}

/// <summary>What the console lifetime does on Ctrl+C during the host's start-up: asks the application to stop.</summary>
internal sealed class StopsTheApplicationAsItStarts(IHostApplicationLifetime lifetime) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        lifetime.StopApplication();
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
