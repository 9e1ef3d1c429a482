using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0005: a helper whose only await is Prioritize, at its end.</summary>
public sealed class PrioritizeInHelperTests
{
    [Fact]
    public Task HelperEndingWithPrioritize_Reported() => Verifier.AnalyzeAsync("""
        using PriorityAsync.Hosting;
        using static PriorityAsync.Priority;

        class C
        {
            static async Task ToBackgroundAsync()
            {
                Console.WriteLine("moving");
                {|PA0005:await Prioritize(0)|};
            }

            static async ValueTask ToLevelAsync(int level) => {|PA0005:await Prioritize(level)|};

            async Task Caller()
            {
                await ToBackgroundAsync();
                await ToLevelAsync(1);
                await Local();

                async Task Local()
                {
                    {|PA0005:await Priority.Prioritize(2)|};
                    return;
                }
            }
        }

        sealed class Worker : PriorityBackgroundService
        {
            protected override async Task ExecuteAsync(CancellationToken stoppingToken) => await UrgentAsync();

            private async Task UrgentAsync() => {|PA0005:await Context.Prioritize(2)|};
        }
        """);

    [Fact]
    public Task HelpersThatMoveTheirOwnWorkOrReturnTheAwaitable_NotReported() => Verifier.AnalyzeAsync("""
        using static PriorityAsync.Priority;

        class C
        {
            static async Task LogAtLowLevelAsync()
            {
                await Prioritize(0);
                Console.WriteLine("at level 0"); // the helper's own work runs at level 0: intended
            }

            static async Task TwoAwaitsAsync()
            {
                await Prioritize(0);
                await Task.Yield();
            }

            static PriorityAwaitable ToLevel(int level) => Prioritize(level); // the caller awaits it, and moves

            static async Task YieldAsync() => await Yield();

            // Off the loop (no sign of a loop): awaiting it moves a caller without a context onto the loop.
            static async Task EnterAsync(PriorityContext context) => await context.Prioritize(1);

            static async Task<int> WithResultAsync()
            {
                await Prioritize(0);
                return 1;
            }
        }
        """);
}
