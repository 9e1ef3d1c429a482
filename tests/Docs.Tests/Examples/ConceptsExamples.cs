using PriorityAsync;
using static PriorityAsync.Priority;

namespace Docs.Tests.Examples;

/// <summary>The code blocks of docs/concepts.md (tools/Snippets copies each region there); ConceptsTests runs them.</summary>
public static class ConceptsExamples
{
    /// <summary>Policies: a weighted-shares loop, its shares changed from another thread while it runs.</summary>
    public static PriorityPolicy Policies()
    {
        // begin-snippet: concepts-policies
        var options = new PriorityContextOptions
        {
            Levels = 3,
            Policy = PriorityPolicy.WeightedShares(1, 2, 4),   // or PriorityPolicy.Aging(...), or PriorityPolicy.Strict
        };
        using var loop = new PriorityContextThread(options);
        loop.Context.SetShares(level: 0, shares: 3);          // weighted shares only: any thread, while it runs
        // end-snippet
        return loop.Context.Policy;
    }

    /// <summary>Checkpoints: a row loop that lets more urgent work in between rows, and a step loop that stops when it should yield.</summary>
    public static async Task CheckpointsAsync(int[] rows, Action<int> Process, Action Step)
    {
        // begin-snippet: concepts-checkpoints
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
        await TaskScope.RunAsync(async scope =>
        {
            scope.Start(token => KeepLeaseAsync(message, token), level: 2); // a child: runs at level 2, owned by the scope
            await ProcessAsync(message);                                     // the body
            scope.Cancel();                                                  // done: stop the keeper
        });                                                                  // returns when the body and every child have ended
        // end-snippet
    }

    /// <summary>When to use which: the same work on several threads, each level a queue shared by the pool's threads.</summary>
    public static async Task<int> SeveralThreadsAsync(int[] documents, Func<int, int> index)
    {
        // begin-snippet: concepts-several-threads
        await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
        {
            Levels = 2,                               // 0: bulk re-indexing, 1: requests
            ThreadCount = Environment.ProcessorCount,
            MaxConcurrencyPerLevel = [Math.Max(1, Environment.ProcessorCount - 1), Environment.ProcessorCount], // a thread kept free for requests
        });

        int indexed = 0;                              // shared by the pool's threads: update it atomically
        Task[] bulk = documents.Select(document => pool.InvokeAsync(async () =>
        {
            index(document);                          // CPU work, on any of the pool's threads
            Interlocked.Increment(ref indexed);
            await Checkpoint();                       // lets a waiting request in first
        }, level: 0)).ToArray();

        int answer = await pool.InvokeAsync(() => Task.FromResult(42), level: 1); // overtakes the queued bulk work
        await Task.WhenAll(bulk);
        // end-snippet
        return answer + indexed;
    }
}
