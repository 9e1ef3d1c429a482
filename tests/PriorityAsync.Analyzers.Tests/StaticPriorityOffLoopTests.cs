using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0004: Priority's static members where the code may have left the loop.</summary>
public sealed class StaticPriorityOffLoopTests
{
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
}
