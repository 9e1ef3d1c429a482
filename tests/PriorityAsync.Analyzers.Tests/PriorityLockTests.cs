using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0006: a lock that knows nothing of levels, awaited where code runs on a priority scheduler (a suggestion).</summary>
public sealed class PriorityLockTests
{
    [Fact]
    public Task SemaphoreSlimAndAsyncLock_AwaitedOnALoopOrAPool_Suggested() => Verifier.AnalyzeAsync("""
        using Nito.AsyncEx;

        class C
        {
            private readonly SemaphoreSlim _gate = new(1, 1);
            private readonly AsyncLock _mutex = new();

            void M(PriorityThreadPool pool, CancellationToken token) => PriorityContext.Run(async () =>
            {
                await {|PA0006:_gate.WaitAsync()|};
                _gate.Release();
                if (await {|PA0006:_gate.WaitAsync(TimeSpan.FromSeconds(1), token)|})
                {
                    _gate.Release();
                }

                await {|PA0006:_gate.WaitAsync(token)|}.ConfigureAwait(false); // the wait starts on the loop
                _gate.Release();
                await pool.InvokeAsync(async () =>
                {
                    using (await {|PA0006:_mutex.LockAsync()|})
                    {
                        await Task.Yield();
                    }

                    using IDisposable held = await {|PA0006:_mutex.LockAsync(token)|};
                });
            });
        }
        """);

    [Fact]
    public Task InAPriorityWorker_Suggested() => Verifier.AnalyzeAsync("""
        using PriorityAsync.Hosting;

        sealed class Worker : PriorityBackgroundService
        {
            private readonly SemaphoreSlim _connection = new(1, 1);

            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                await {|PA0006:_connection.WaitAsync(stoppingToken)|};
                try
                {
                    await Priority.Yield();
                }
                finally
                {
                    _connection.Release();
                }
            }

            public override async Task StopAsync(CancellationToken cancellationToken)
            {
                await _connection.WaitAsync(cancellationToken); // the host's thread: no levels there
                _connection.Release();
                await base.StopAsync(cancellationToken);
            }
        }
        """);

    [Fact]
    public Task OffTheSchedulerOrNotALockWait_NotSuggested() => Verifier.AnalyzeAsync("""
        using Nito.AsyncEx;

        class C
        {
            private readonly SemaphoreSlim _gate = new(1, 1);
            private readonly AsyncLock _mutex = new();

            async Task OffTheLoop()
            {
                await _gate.WaitAsync();
                using (await _mutex.LockAsync())
                {
                }
            }

            void OnTheLoop(Task work) => PriorityContext.Run(async () =>
            {
                await Task.Run(async () => await _gate.WaitAsync());    // the thread pool runs it
                await work.WaitAsync(Timeout.InfiniteTimeSpan);          // a task's WaitAsync, not a lock's
                Task pending = _gate.WaitAsync(0);                       // not awaited here: a try, not a wait
                await Task.Delay(TimeSpan.FromMilliseconds(1), PriorityContext.Current!.TimeProvider).ConfigureAwait(false);
                await _gate.WaitAsync();                                 // after ConfigureAwait(false): off the loop
                await new Other.AsyncLock().LockAsync();                 // another AsyncLock
                await pending;
            });
        }

        namespace Other
        {
            class AsyncLock
            {
                public Task LockAsync() => Task.CompletedTask;
            }
        }
        """);

    [Fact]
    public void PriorityLock_IsASuggestion_NotAWarning()
    {
        // Many such locks are never contended across levels: the rule suggests, it never fails a build with warnings as errors.
        Descriptors.PriorityLock.DefaultSeverity.Should().Be(Microsoft.CodeAnalysis.DiagnosticSeverity.Info);
        Descriptors.PriorityLock.IsEnabledByDefault.Should().BeTrue();
        Descriptors.PriorityLock.MessageFormat.ToString().Should().Contain("{1}");
    }
}
