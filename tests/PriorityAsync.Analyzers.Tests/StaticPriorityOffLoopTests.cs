using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0004: Priority's static members where the code may have left the loop.</summary>
public sealed class StaticPriorityOffLoopTests
{
    [Fact]
    public Task PriorityThreadPool_PrioritizeAndInvokeAsync_CountAsOnTheScheduler() => Verifier.AnalyzeAsync("""
        using static PriorityAsync.Priority;

        class C
        {
            async Task Hop(PriorityThreadPool pool)
            {
                await Task.Run(async () =>
                {
                    await pool.Prioritize(1);
                    await Yield();                                  // on the pool after the hop: no PA0004
                    await {|PA0001:Task.Delay(1)|};                 // the pool has its own timers
                });
                await pool.InvokeAsync(async () => await {|PA0001:Task.Delay(1)|}, 1);
                pool.InvokeAsync(() => Task.CompletedTask);         // owned: the pool waits for it
            }
        }
        """);

    [Fact]
    public Task StaticMembers_AfterConfigureAwaitFalse_Reported() => Verifier.AnalyzeAsync("""
        using static PriorityAsync.Priority;

        class C
        {
            async Task M(Task io, CancellationToken token)
            {
                await Yield();
                await io.ConfigureAwait(false);
                await {|PA0004:Prioritize(1)|};
                await {|PA0004:Priority.Yield()|};
                await {|PA0004:Checkpoint()|};
                await {|PA0004:Priority.Delay(TimeSpan.FromSeconds(1), token)|};
                if ({|PA0004:ShouldYield|})
                {
                }
            }

            async Task Options(Task io)
            {
                await io.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                await {|PA0004:Yield()|};
            }

            async Task Stream(IAsyncEnumerable<int> items)
            {
                await foreach (int item in items.ConfigureAwait(false))
                {
                    await {|PA0004:Yield()|};
                }
            }

            void Pool() => PriorityContext.Run(async () =>
            {
                await Task.Run(async () => await {|PA0004:Yield()|});
            });
        }
        """);

    [Fact]
    public Task StaticMembers_AfterReturningToTheLoopOrWithCapturedContext_NotReported() => Verifier.AnalyzeAsync("""
        using static PriorityAsync.Priority;

        class C
        {
            async Task M(PriorityContext context, Task io)
            {
                await Yield();
                await io.ConfigureAwait(false);
                await context.Prioritize(1); // the documented way back onto the loop
                await Yield();
                await Prioritize(2);
                await io.ConfigureAwait(true);
                await Checkpoint();
                await io.ConfigureAwait(ConfigureAwaitOptions.ContinueOnCapturedContext);
                await Yield();
            }

            async Task Before(Task io)
            {
                await Yield();
                await io.ConfigureAwait(false); // nothing of Priority follows
            }
        }
        """);

    [Fact]
    public Task StartingChildren_AfterConfigureAwaitFalse_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task WorkAsync(CancellationToken token) => Task.CompletedTask;

            async Task M(TaskScope scope, Task io)
            {
                scope.Start(WorkAsync);
                await io.ConfigureAwait(false);
                {|PA0004:Priority.Start(WorkAsync)|};
                {|PA0004:scope.Start(WorkAsync)|};
                await {|PA0004:scope.StartAsync(WorkAsync)|};
                await {|PA0004:TaskScope.RunAsync(_ => Task.CompletedTask)|};
            }

            void Pool(TaskScope scope) => PriorityContext.Run(async () =>
            {
                await Task.Run(() => {|PA0004:scope.Start(WorkAsync)|});
            });
        }
        """);

    [Fact]
    public Task CancellingAScope_FromAnyThread_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            // Cancel and CancellationToken work from any thread: they neither need the loop nor say the code runs on one.
            async Task M(TaskScope scope, Task io)
            {
                await io.ConfigureAwait(false);
                scope.Cancel();
                CancellationToken token = scope.CancellationToken;
                await Task.Run(() => scope.Cancel());
            }

            void OffTheLoop(TaskScope scope)
            {
                scope.Cancel();
                Thread.Sleep(10);
                scope.CancellationToken.WaitHandle.WaitOne(10);
            }
        }
        """);
}
