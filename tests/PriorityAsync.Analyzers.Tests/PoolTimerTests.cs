using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0001: pool timers on the loop, and the same calls where no loop runs them.</summary>
public sealed class PoolTimerTests
{
    [Fact]
    public Task TaskDelay_InRunLambda_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M() => PriorityContext.Run(async () =>
            {
                await {|PA0001:Task.Delay(100)|};
            });
        }
        """);

    [Fact]
    public Task TaskDelay_InInvokeAsyncAndFactoryAndPost_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            async Task M(PriorityContext context, PriorityTaskController controller)
            {
                await context.InvokeAsync(async () => await {|PA0001:Task.Delay(1)|});
                await context.InvokeAsync(async () => await {|PA0001:Task.Delay(1)|}, 1);
                await context.GetTaskFactory(1).StartNew(() => {|PA0001:Task.Delay(1)|}).Unwrap();
                await Task.Factory.StartNew(() => {|PA0001:Task.Delay(1)|}, CancellationToken.None, TaskCreationOptions.None, context.GetScheduler(0)).Unwrap();
                context.GetSynchronizationContext(0).Post(_ => _ = {|PA0001:Task.Delay(1)|}.ContinueWith(t => { }), null);
                await controller.Run(async () => await {|PA0001:Task.Delay(1)|});
                await Task.Delay(1); // the method itself runs where its caller does: nothing says it is a loop
            }
        }
        """);

    [Fact]
    public Task TaskDelay_InPriorityWorker_ReportedInItsMembersButNotWhereTheHostCallsIt() => Verifier.AnalyzeAsync("""
        using PriorityAsync.Hosting;

        sealed class Worker : PriorityBackgroundService
        {
            public Worker()
            {
                Task.Delay(1).Wait(); // the host's thread, in dependency injection
            }

            public override async Task StartAsync(CancellationToken cancellationToken)
            {
                await Task.Delay(1, cancellationToken);
                await base.StartAsync(cancellationToken);
            }

            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                await {|PA0001:Task.Delay(1000, stoppingToken)|};
                await HeartbeatAsync(stoppingToken);
            }

            private static async Task HeartbeatAsync(CancellationToken stoppingToken)
            {
                using var timer = {|PA0001:new PeriodicTimer(TimeSpan.FromSeconds(1))|};
                await timer.WaitForNextTickAsync(stoppingToken);
            }
        }
        """);

    [Fact]
    public Task TaskDelay_InMethodThatUsesPriority_ReportedAlsoBeforeTheUse() => Verifier.AnalyzeAsync("""
        using static PriorityAsync.Priority;

        class C
        {
            async Task M(CancellationToken token)
            {
                await {|PA0001:Task.Delay(TimeSpan.FromSeconds(1), token)|};
                await Yield();
            }

            async Task Checkpoints(CancellationToken token)
            {
                await {|PA0001:Task.Delay(5, token)|};
                if (ShouldYield)
                {
                    await Checkpoint();
                }
            }
        }
        """);

    [Fact]
    public Task TaskDelay_MarkedRunsOnPriorityLoop_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            [RunsOnPriorityLoop]
            async Task M() => await {|PA0001:Task.Delay(1)|};

            async Task N()
            {
                [RunsOnPriorityLoop]
                async Task Local() => await {|PA0001:Task.Delay(1)|};
                await Local();
                Func<Task> lambda = [RunsOnPriorityLoop] async () => await {|PA0001:Task.Delay(1)|};
                await lambda();
            }
        }

        [RunsOnPriorityLoop]
        class Handler
        {
            public Task Handle() => {|PA0001:Task.Delay(1)|};
            public int Slow { get { {|PA0002:Thread.Sleep(1)|}; return 1; } }
        }
        """);

    [Fact]
    public Task TaskDelay_AfterContextPrioritize_ReportedOnlyAfterIt() => Verifier.AnalyzeAsync("""
        class C
        {
            async Task FromThePool(PriorityContext context)
            {
                await Task.Delay(1).ConfigureAwait(false); // not on the loop yet
                await context.Prioritize(1);
                await {|PA0001:Task.Delay(1)|};
            }
        }
        """);

    [Fact]
    public Task TaskDelay_AfterConfigureAwaitFalse_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M() => PriorityContext.Run(async () =>
            {
                await {|PA0001:Task.Delay(1)|}.ConfigureAwait(false);
                await Task.Delay(1); // on the pool from here: a pool timer is what the pool has
                await Task.Delay(1).ConfigureAwait(ConfigureAwaitOptions.None);
            });
        }
        """);

    [Fact]
    public Task TaskDelay_InLambdasThatRunOffTheLoop_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                await Task.Run(async () => await Task.Delay(1));
                await Task.Factory.StartNew(() => Task.Delay(1)).Unwrap();
                ThreadPool.QueueUserWorkItem(_ => Task.Delay(1).Wait());
                new Thread(() => Thread.Sleep(1)).Start();
                await {|PA0001:Task.Delay(1)|}.ContinueWith(t => Task.Delay(1).Wait());
                token.Register(() => Thread.Sleep(1));
                AppDomain.CurrentDomain.ProcessExit += (_, _) => Thread.Sleep(1);
                await Task.WhenAll(Enumerable.Range(0, 2).Select(async i => await {|PA0001:Task.Delay(i + 1)|}));
            });
        }
        """);

    [Fact]
    public Task TaskDelay_InTestProjectStyleCode_NotReported() => Verifier.AnalyzeAsync("""
        class ContextTests
        {
            public void Run_Delay_Completes()
            {
                var gate = new TaskCompletionSource();
                PriorityContext.Run(async () =>
                {
                    await Priority.Yield();
                    gate.SetResult();
                });
                gate.Task.Wait(TimeSpan.FromSeconds(10));
                Task.Delay(10).Wait();
                Thread.Sleep(1);
            }

            public async Task Thread_Completes()
            {
                await using var thread = new PriorityContextThread();
                Task work = thread.Context.InvokeAsync(() => Task.CompletedTask).Task;
                work.Wait();
                _ = work.Result();
                await Task.Delay(10);
                await work.WaitAsync(TimeSpan.FromSeconds(10));
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            }
        }

        static class Extensions
        {
            public static int Result(this Task task) => 0;
        }
        """);

    [Fact]
    public Task TaskDelay_WithTimeProviderOrWithoutTimer_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M(CancellationToken token) => PriorityContext.Run(async () =>
            {
                TimeProvider time = PriorityContext.Current!.TimeProvider;
                await Task.Delay(TimeSpan.FromSeconds(1), time, token);
                await Task.Delay(TimeSpan.FromSeconds(1), time);
                await Task.Delay(0);
                await Task.Delay(TimeSpan.Zero, token);
                await Task.WhenAny(Task.Delay(Timeout.Infinite, token), Task.Delay(Timeout.InfiniteTimeSpan, token));
                await Priority.Delay(TimeSpan.FromSeconds(1), token);
            });
        }
        """);

    [Fact]
    public Task Timers_OnTheLoop_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M(Task work, CancellationToken token) => PriorityContext.Run(async () =>
            {
                using var timer = {|PA0001:new Timer(_ => { }, null, 1000, 1000)|};
                using var systemTimer = {|PA0001:new System.Timers.Timer(1000)|};
                using var periodic = {|PA0001:new PeriodicTimer(TimeSpan.FromSeconds(1))|};
                using var cts = {|PA0001:new CancellationTokenSource(1000)|};
                using var cts2 = {|PA0001:new CancellationTokenSource(TimeSpan.FromSeconds(1))|};
                await {|PA0001:work.WaitAsync(TimeSpan.FromSeconds(1))|};
                await {|PA0001:work.WaitAsync(TimeSpan.FromSeconds(1), token)|};
                int value = await {|PA0001:Task.FromResult(1).WaitAsync(TimeSpan.FromSeconds(1))|};
            });
        }
        """);

    [Fact]
    public Task Timers_WithTheLoopsTimeProvider_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            void M(Task work, CancellationToken token) => PriorityContext.Run(async () =>
            {
                PriorityContext context = PriorityContext.Current!;
                using var timer = context.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
                using var periodic = new PeriodicTimer(TimeSpan.FromSeconds(1), context.TimeProvider);
                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(1), context.TimeProvider);
                using var plain = new CancellationTokenSource();
                using var never = new CancellationTokenSource(Timeout.Infinite);
                await work.WaitAsync(TimeSpan.FromSeconds(1), context.TimeProvider, token);
                await work.WaitAsync(token);
                await work.WaitAsync(Timeout.InfiniteTimeSpan);
            });
        }
        """);

    [Fact]
    public Task PoolWorker_TimersAndBlockingWaitsInItsMembers_AreReportedButNotWhereTheHostCallsIt() => Verifier.AnalyzeAsync("""
        using PriorityAsync.Hosting;

        sealed class ReindexWorker : PriorityThreadPoolBackgroundService
        {
            public ReindexWorker()
            {
                Task.Delay(1).Wait(); // the host's thread, in dependency injection
            }

            public override async Task StopAsync(CancellationToken cancellationToken)
            {
                await Task.Delay(1, cancellationToken);
                await base.StopAsync(cancellationToken);
            }

            protected override async Task ExecuteAsync(CancellationToken stoppingToken)
            {
                await {|PA0001:Task.Delay(1000, stoppingToken)|};
                {|PA0002:Thread.Sleep(100)|};
                await ReportAsync(stoppingToken);
            }

            private static async Task ReportAsync(CancellationToken stoppingToken)
            {
                using var timer = {|PA0001:new PeriodicTimer(TimeSpan.FromSeconds(1))|};
                await timer.WaitForNextTickAsync(stoppingToken);
            }
        }
        """);
}
