// The code quoted in docs/getting-started.md (tools/Snippets copies each region there): it is compiled, and
// tests/Docs.Tests runs it and checks what the page says it prints, so the page cannot rot.
// dotnet run --project samples/GettingStarted
// begin-snippet: getting-started-run
using PriorityAsync;
using static PriorityAsync.Priority;

var order = new List<string>();
int exit = PriorityContext.Run(async () =>
{
    Task lease = KeepLeaseAsync(order);          // moves itself to level 2
    Task work = ProcessAsync(order);             // moves itself to level 1
    await Task.WhenAll(lease, work);             // the entry stays at level 0
    return 0;
}, new PriorityContextOptions { Levels = 3 });

Console.WriteLine(string.Join(" | ", order));

static async Task KeepLeaseAsync(List<string> order)
{
    await Prioritize(2);                         // completes at once: nothing is queued above level 2
    await Delay(TimeSpan.FromMilliseconds(100)); // a loop timer, due during step 0; resumes at level 2: the level is carried across await
    order.Add($"lease refreshed at level {PriorityContext.CurrentLevel}");
}

static async Task ProcessAsync(List<string> order)
{
    await Prioritize(1);
    for (int step = 0; step < 3; step++)
    {
        BusyFor(300);                            // 300 ms of CPU-bound work: nothing can interrupt it
        order.Add($"step {step} at level {PriorityContext.CurrentLevel}");
        await Yield();                           // a checkpoint: anything more urgent runs now
    }
}

static void BusyFor(int milliseconds)            // stands for real work: keeps the CPU busy, as a computation would
{
    long end = Environment.TickCount64 + milliseconds;
    while (Environment.TickCount64 < end) { }
}
// end-snippet

// begin-snippet: getting-started-thread
// Needs: the first block's usings (using PriorityAsync;): it goes on in the same Program.cs.
await using (var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "worker" }))
{
    int level = await OnLoopAsync(loop.Context);                                                   // 1
    int fromFactory = await loop.Context.GetTaskFactory(2).StartNew(() => PriorityContext.CurrentLevel);   // 2: a task at level 2
    Console.WriteLine($"On the loop thread at level {level}; a task from GetTaskFactory(2) ran at level {fromFactory}.");
}

static async Task<int> OnLoopAsync(PriorityContext context)
{
    await context.Prioritize(1);                 // from any thread: hop onto the loop, at level 1
    return PriorityContext.CurrentLevel;         // on the loop thread
}
// end-snippet

// begin-snippet: getting-started-late
// Needs: the first block's usings (using PriorityAsync;): it goes on in the same Program.cs.
PriorityContext? finished = null;
PriorityContext.Run(() => { finished = PriorityContext.Current; });
finished!.WorkDropped += (_, e) => Console.WriteLine($"A post after the context finished was reported: level {e.Level}, {e.Reason}.");
finished.GetSynchronizationContext(1).Post(_ => Console.WriteLine("never runs"), null);
// end-snippet

return exit;
