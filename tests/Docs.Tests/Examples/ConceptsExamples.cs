using PriorityAsync;
using static PriorityAsync.Priority;

namespace Docs.Tests.Examples;

/// <summary>The code blocks of docs/concepts.md (tools/Snippets copies each region there); ConceptsTests runs them.</summary>
public static class ConceptsExamples
{
    /// <summary>Checkpoints: a row loop that lets more urgent work in between rows, and a step loop that stops when it should yield.</summary>
    public static async Task CheckpointsAsync(int[] rows, Action<int> Process, Action Step)
    {
        // begin-snippet: concepts-checkpoints
        // Needs: an async method on a loop (PriorityContext.Run), using static PriorityAsync.Priority; rows, Process and Step.
        for (int i = 0; i < rows.Length; i++)
        {
            Process(rows[i]);
            await Checkpoint();         // usually completes at once; yields only when it should
        }

        while (!ShouldYield)            // or decide for yourself, without an await
        {
            Step();
        }
        // end-snippet
    }

    /// <summary>Re-prioritising: a background job's queued work moved up, then dropped.</summary>
    public static Task RenderDocument(PriorityContext context, IEnumerable<string> pages, Func<string, Task> RenderAsync)
    {
        // begin-snippet: concepts-controller
        // Needs: a PriorityContext named context (PriorityContext.Current on the loop), pages and RenderAsync.
        PriorityTaskController job = context.CreateController(level: 0);       // background
        Task done = job.Run(async () =>
        {
            foreach (string page in pages)
            {
                await RenderAsync(page);      // every continuation comes back through the controller
            }
        });

        job.SetLevel(2);                       // the user opened the document: its queued work moves ahead of everything at 0 and 1
        job.Cancel();                          // the user closed it: its queued work is dropped, reported through WorkDropped (Cancelled)
        // end-snippet
        return done;
    }

    /// <summary>Timers: every loop-owned timer form, then one periodic tick; returns the level and thread it ended on.</summary>
    public static async Task<(int Level, int Thread)> TimersAsync(Task work)
    {
        // begin-snippet: concepts-timers
        // Needs: an async method on the loop (PriorityContext.Run), using PriorityAsync; a Task named work.
        PriorityContext context = PriorityContext.Current!;
        await Priority.Delay(TimeSpan.FromMilliseconds(20));                    // pooled ValueTask, 0 B in steady state
        await Task.Delay(TimeSpan.FromMilliseconds(20), context.TimeProvider);   // the same timer, as a Task
        await work.WaitAsync(TimeSpan.FromSeconds(1), context.TimeProvider);      // times out on the loop
        using var ticks = new PeriodicTimer(TimeSpan.FromMilliseconds(20), context.TimeProvider);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(5), context.TimeProvider);
        // end-snippet
        await ticks.WaitForNextTickAsync(cts.Token);
        return (PriorityContext.CurrentLevel, Environment.CurrentManagedThreadId);
    }

    /// <summary>TaskScope: a lease keeper owned by the scope, at level 2, stopped when the processing is done.</summary>
    public static async Task HandleAsync(string message, Func<string, CancellationToken, Task> KeepLeaseAsync, Func<string, Task> ProcessAsync)
    {
        // begin-snippet: concepts-taskscope
        // Needs: an async method on a loop (PriorityContext.Run), using PriorityAsync; KeepLeaseAsync and ProcessAsync.
        await TaskScope.RunAsync(async scope =>
        {
            scope.Start(token => KeepLeaseAsync(message, token), level: 2); // a child: runs at level 2, owned by the scope
            await ProcessAsync(message);                                     // the body
            scope.Cancel();                                                  // done: stop the keeper
        });                                                                  // returns when the body and every child have ended
        // end-snippet
    }

}
