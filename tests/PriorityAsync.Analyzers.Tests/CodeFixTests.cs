using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>The code fixes' output: PA0001 (Priority.Delay, the context's TimeProvider) and PA0003 (a child of a scope).</summary>
public sealed class CodeFixTests
{
    [Fact]
    public Task AwaitedDelay_BecomesPriorityDelay() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                await {|PA0001:Task.Delay(TimeSpan.FromSeconds(1), token)|};
                await {|PA0001:Task.Delay(250)|};
                await {|PA0001:Task.Delay(millisecondsDelay: 250, cancellationToken: token)|};
            });
        }
        """, """
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                await Priority.Delay(TimeSpan.FromSeconds(1), token);
                await Priority.Delay(TimeSpan.FromMilliseconds(250));
                await Priority.Delay(TimeSpan.FromMilliseconds(250), cancellationToken: token);
            });
        }
        """);

    [Fact]
    public Task DelayUsedAsValue_GetsTheContextsTimeProvider() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            void M(Task work, CancellationToken token) => PriorityContext.Run(async () =>
            {
                Task first = await Task.WhenAny(work, {|PA0001:Task.Delay(TimeSpan.FromSeconds(5), token)|});
                Task timeout = {|PA0001:Task.Delay(100)|};
                await timeout;
            });
        }
        """, """
        class C
        {
            void M(Task work, CancellationToken token) => PriorityContext.Run(async () =>
            {
                Task first = await Task.WhenAny(work, Task.Delay(TimeSpan.FromSeconds(5), Priority.CurrentScheduler!.TimeProvider, token));
                Task timeout = Task.Delay(TimeSpan.FromMilliseconds(100), Priority.CurrentScheduler!.TimeProvider);
                await timeout;
            });
        }
        """);

    [Fact]
    public Task TimersInAWorker_UseTheWorkersContext() => Verifier.FixAsync<PoolTimerCodeFix>("""
        using PriorityAsync.Hosting;

        sealed class Worker : PriorityBackgroundService
        {
            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                using var timer = {|PA0001:new PeriodicTimer(TimeSpan.FromSeconds(1))|};
                using var cts = {|PA0001:new CancellationTokenSource(5000)|};
                await {|PA0001:ExecuteTask!.WaitAsync(TimeSpan.FromSeconds(1), stoppingToken)|};
                _ = await Task.WhenAny({|PA0001:Task.Delay(1000, stoppingToken)|});
            }
        }
        """, """
        using PriorityAsync.Hosting;

        sealed class Worker : PriorityBackgroundService
        {
            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1), Context.TimeProvider);
                using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(5000), Context.TimeProvider);
                await ExecuteTask!.WaitAsync(TimeSpan.FromSeconds(1), Context.TimeProvider, stoppingToken);
                _ = await Task.WhenAny(Task.Delay(TimeSpan.FromMilliseconds(1000), Context.TimeProvider, stoppingToken));
            }
        }
        """);

    [Fact]
    public Task DelayWithAContextVariable_UsesTheVariable() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            async Task M(PriorityContext context)
            {
                await context.Prioritize(1);
                Task delay = {|PA0001:Task.Delay(TimeSpan.FromSeconds(1))|};
                await delay;
            }
        }
        """, """
        class C
        {
            async Task M(PriorityContext context)
            {
                await context.Prioritize(1);
                Task delay = Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider);
                await delay;
            }
        }
        """);

    [Fact]
    public Task Timer_HasNoFix() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            void M() => PriorityContext.Run(() =>
            {
                using var timer = {|PA0001:new Timer(_ => { }, null, 1000, 1000)|};
            });
        }
        """, """
        class C
        {
            void M() => PriorityContext.Run(() =>
            {
                using var timer = {|PA0001:new Timer(_ => { }, null, 1000, 1000)|};
            });
        }
        """);

    [Fact]
    public Task DiscardedTask_InAScope_BecomesTheScopesChild() => Verifier.FixAsync<UnownedTaskCodeFix>("""
        class C
        {
            Task FooAsync(int x) => Task.CompletedTask;
            ValueTask BarAsync() => default;

            void M() => PriorityContext.Run(() => TaskScope.RunAsync(async scope =>
            {
                {|PA0003:_ = FooAsync(1);|}
                {|PA0003:BarAsync();|}
                await Task.Yield();
            }));
        }
        """, """
        class C
        {
            Task FooAsync(int x) => Task.CompletedTask;
            ValueTask BarAsync() => default;

            void M() => PriorityContext.Run(() => TaskScope.RunAsync(async scope =>
            {
                scope.Start(_ => FooAsync(1));
                scope.Start(_ => BarAsync().AsTask());
                await Task.Yield();
            }));
        }
        """);

    [Fact]
    public Task DiscardedTask_OutsideAScope_BecomesAChildOfTheLoop() => Verifier.FixAsync<UnownedTaskCodeFix>("""
        class C
        {
            Task KeepLeaseAsync(string message) => Task.CompletedTask;

            void M() => PriorityContext.Run(async () =>
            {
                {|PA0003:_ = KeepLeaseAsync("m");|} // keep the lease while processing
                await Priority.Yield();
            });
        }
        """, """
        class C
        {
            Task KeepLeaseAsync(string message) => Task.CompletedTask;

            void M() => PriorityContext.Run(async () =>
            {
                Priority.Start(_ => KeepLeaseAsync("m")); // keep the lease while processing
                await Priority.Yield();
            });
        }
        """);

    [Fact]
    public Task DiscardedTask_InASynchronousLambda_BecomesAPlainStart() => Verifier.FixAsync<UnownedTaskCodeFix>("""
        class C
        {
            Task FooAsync(int x) => Task.CompletedTask;

            void M() => PriorityContext.Run(() => TaskScope.RunAsync(scope =>
            {
                {|PA0003:_ = FooAsync(1);|}
                return Task.CompletedTask;
            }));
        }
        """, """
        class C
        {
            Task FooAsync(int x) => Task.CompletedTask;

            void M() => PriorityContext.Run(() => TaskScope.RunAsync(scope =>
            {
                scope.Start(_ => FooAsync(1));
                return Task.CompletedTask;
            }));
        }
        """);

    [Fact]
    public Task DiscardedTask_InAMethodWithAScopeParameter_StartsOnThatScope() => Verifier.FixAsync<UnownedTaskCodeFix>("""
        class C
        {
            Task<int> CountAsync(int x) => Task.FromResult(x);

            [RunsOnPriorityLoop]
            async Task HandleAsync(TaskScope children, Task io)
            {
                {|PA0003:_ = CountAsync(1);|}
                foreach (int x in new[] { 2, 3 })
                {
                    {|PA0003:CountAsync(x);|}
                }

                await io;
            }
        }
        """, """
        class C
        {
            Task<int> CountAsync(int x) => Task.FromResult(x);

            [RunsOnPriorityLoop]
            async Task HandleAsync(TaskScope children, Task io)
            {
                children.Start(_ => CountAsync(1));
                foreach (int x in new[] { 2, 3 })
                {
                    children.Start(_ => CountAsync(x));
                }

                await io;
            }
        }
        """);

    [Fact]
    public Task DiscardedTask_WithoutTheChildTaskApi_HasNoFix() => Verifier.FixAsync<UnownedTaskCodeFix>("""
        class C
        {
            Task KeepLeaseAsync() => Task.CompletedTask;

            void M() => PriorityContext.Run(() => { {|PA0003:_ = KeepLeaseAsync();|} });
        }
        """, """
        class C
        {
            Task KeepLeaseAsync() => Task.CompletedTask;

            void M() => PriorityContext.Run(() => { {|PA0003:_ = KeepLeaseAsync();|} });
        }
        """, StandIns.LibraryWithoutChildTasks);

    [Fact]
    public Task PoolTimerFixAll_NestedTimersAndATimerWithoutAFixFirst_FixesEveryOtherOneInOnePass() => Verifier.FixAllAsync<PoolTimerCodeFix>("""
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                using var timer = {|PA0001:new Timer(_ => { }, null, 100, 100)|};
                await {|PA0001:Task.Delay(100)|};
                await {|PA0001:{|PA0001:Task.Delay(200)|}.WaitAsync(TimeSpan.FromSeconds(1))|};
                Task late = {|PA0001:Task.Delay(TimeSpan.FromSeconds(5), token)|};
                using var cts = {|PA0001:new CancellationTokenSource(TimeSpan.FromSeconds(5))|};
                await late;
            });
        }
        """, """
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                using var timer = {|PA0001:new Timer(_ => { }, null, 100, 100)|};
                await Priority.Delay(TimeSpan.FromMilliseconds(100));
                await Task.Delay(TimeSpan.FromMilliseconds(200), Priority.CurrentScheduler!.TimeProvider).WaitAsync(TimeSpan.FromSeconds(1), Priority.CurrentScheduler!.TimeProvider);
                Task late = Task.Delay(TimeSpan.FromSeconds(5), Priority.CurrentScheduler!.TimeProvider, token);
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5), Priority.CurrentScheduler!.TimeProvider);
                await late;
            });
        }
        """, diagnostics: 5);

    [Fact]
    public Task UnownedTaskFixAll_ATaskWithoutAFixFirst_StartsEveryOtherOneAsAChildOfItsOwnerInOnePass() => Verifier.FixAllAsync<UnownedTaskCodeFix>("""
        class C
        {
            static Task FooAsync() => Task.CompletedTask;

            Task BarAsync() => Task.CompletedTask;

            void M(C? other) => PriorityContext.Run(async () =>
            {
                {|PA0003:other?.BarAsync();|}
                {|PA0003:_ = FooAsync();|}
                {|PA0003:FooAsync();|}
                await TaskScope.RunAsync(async scope =>
                {
                    {|PA0003:_ = FooAsync();|}
                    {|PA0003:FooAsync();|}
                    await Task.Yield();
                });
                await Task.Yield();
            });
        }
        """, """
        class C
        {
            static Task FooAsync() => Task.CompletedTask;

            Task BarAsync() => Task.CompletedTask;

            void M(C? other) => PriorityContext.Run(async () =>
            {
                {|PA0003:other?.BarAsync();|}
                Priority.Start(_ => FooAsync());
                Priority.Start(_ => FooAsync());
                await TaskScope.RunAsync(async scope =>
                {
                    scope.Start(_ => FooAsync());
                    scope.Start(_ => FooAsync());
                    await Task.Yield();
                });
                await Task.Yield();
            });
        }
        """, diagnostics: 4);

    [Fact]
    public Task TimersInAPoolWorker_UseThePoolsTimeProvider() => Verifier.FixAsync<PoolTimerCodeFix>("""
        using PriorityAsync.Hosting;

        sealed class ReindexWorker : PriorityThreadPoolBackgroundService
        {
            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                await {|PA0001:Task.Delay(TimeSpan.FromSeconds(1), stoppingToken)|};
                using var cts = {|PA0001:new CancellationTokenSource(TimeSpan.FromSeconds(5))|};
            }
        }
        """, """
        using PriorityAsync.Hosting;

        sealed class ReindexWorker : PriorityThreadPoolBackgroundService
        {
            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                await Priority.Delay(TimeSpan.FromSeconds(1), stoppingToken);
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5), Pool.TimeProvider);
            }
        }
        """);

    [Fact]
    public Task TimersInALambdaThePoolRuns_UseThePool_NeverPriorityContextCurrent() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            private readonly PriorityThreadPool _pool = new(new PriorityThreadPoolOptions { ThreadCount = 2 });

            // On a pool's thread PriorityContext.Current is null: the fix names the pool that runs the lambda.
            async Task M(PriorityContext context, PriorityThreadPool pool)
            {
                await pool.InvokeAsync(async () =>
                {
                    using var cts = {|PA0001:new CancellationTokenSource(TimeSpan.FromSeconds(5))|};
                    await Task.WhenAll(Enumerable.Range(0, 2).Select(i => {|PA0001:Task.Delay(i + 1)|}));
                });
                await _pool.GetTaskFactory(1).StartNew(() => {|PA0001:Task.Delay(2)|}).Unwrap();
            }
        }
        """, """
        class C
        {
            private readonly PriorityThreadPool _pool = new(new PriorityThreadPoolOptions { ThreadCount = 2 });

            // On a pool's thread PriorityContext.Current is null: the fix names the pool that runs the lambda.
            async Task M(PriorityContext context, PriorityThreadPool pool)
            {
                await pool.InvokeAsync(async () =>
                {
                    using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5), pool.TimeProvider);
                    await Task.WhenAll(Enumerable.Range(0, 2).Select(i => Task.Delay(TimeSpan.FromMilliseconds(i + 1), pool.TimeProvider)));
                });
                await _pool.GetTaskFactory(1).StartNew(() => Task.Delay(TimeSpan.FromMilliseconds(2), _pool.TimeProvider)).Unwrap();
            }
        }
        """);

    [Fact]
    public Task TimerAfterAPoolsPrioritize_UsesThePoolVariable() => Verifier.FixAsync<PoolTimerCodeFix>("""
        class C
        {
            async Task M(PriorityThreadPool pool)
            {
                await pool.Prioritize(1);
                using var timer = {|PA0001:new PeriodicTimer(TimeSpan.FromSeconds(1))|};
                await timer.WaitForNextTickAsync();
            }
        }
        """, """
        class C
        {
            async Task M(PriorityThreadPool pool)
            {
                await pool.Prioritize(1);
                using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1), pool.TimeProvider);
                await timer.WaitForNextTickAsync();
            }
        }
        """);
}
