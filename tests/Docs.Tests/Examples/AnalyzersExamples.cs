using PriorityAsync;
using PriorityAsync.Hosting;

namespace Docs.Tests.Examples;

/// <summary>
/// The code blocks of docs/analyzers.md (tools/Snippets copies each region there): what the code fixes write. Compiled with the
/// analyzers on, like every project of the repository, so a fixed line that still drew a diagnostic would break the build.
/// </summary>
public sealed class AnalyzersExamples : PriorityBackgroundService
{
    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        Task work = Task.CompletedTask;
        TimeSpan period = TimeSpan.FromSeconds(1);
        TimerCallback callback = _ => { };

        // begin-snippet: analyzers-pa0001-fix
        // Needs: the ExecuteAsync of a PriorityBackgroundService (PriorityAsync.Hosting): stoppingToken, Context, work, period.
        await Priority.Delay(TimeSpan.FromSeconds(1), stoppingToken);                              // awaited directly
        Task deadline = Task.Delay(TimeSpan.FromSeconds(5), Context.TimeProvider, stoppingToken);   // a task used as a value (WhenAny, stored)
        using var periodic = new PeriodicTimer(period, Context.TimeProvider);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5), Context.TimeProvider);
        await work.WaitAsync(TimeSpan.FromSeconds(5), Context.TimeProvider, stoppingToken);
        using ITimer timer = Context.TimeProvider.CreateTimer(callback, null, period, period);     // instead of new Timer
        // end-snippet

        await Task.WhenAny(deadline, periodic.WaitForNextTickAsync(stoppingToken).AsTask());
        await TaskScope.RunAsync(scope =>
        {
            // begin-snippet: analyzers-pa0003-fix
            // Needs: a method on a loop, a TaskScope named scope (TaskScope.RunAsync(scope => ...)) and a FooAsync.
            scope.Start(_ => FooAsync(1));    // inside a lambda, local function or method with a TaskScope parameter (the nearest one)
            Priority.Start(_ => FooAsync(2)); // elsewhere: a child of the loop's root scope
            // end-snippet
            return Task.CompletedTask;
        }, stoppingToken);
    }

    private static Task FooAsync(int x) => Task.Delay(TimeSpan.FromMilliseconds(x), TimeProvider.System);
}
