// The code quoted in docs/getting-started.md: it is compiled and run, so the docs cannot rot.
// dotnet run --project samples/GettingStarted
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using PriorityAsync;
using static PriorityAsync.Priority;

// --- 1. Run an async entry point on this thread, with three levels (2 runs first). ---------------------------------------
var order = new List<string>();
int exit = PriorityContext.Run(async () =>
{
    Task lease = KeepLeaseAsync(order);          // moves itself to level 2
    Task work = ProcessAsync(order);             // moves itself to level 1
    await Task.WhenAll(lease, work);             // the entry stays at level 0
    return 0;
}, new PriorityContextOptions { Levels = 3 });

Console.WriteLine($"1. Run returned {exit}. The lease timer fired during step 0; its level-2 continuation ran before the queued step 1:");
Console.WriteLine("   " + string.Join(" | ", order));

// --- 2. A dedicated loop thread; hop onto it from anywhere. ---------------------------------------------------------------
await using (var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "worker" }))
{
    int level = await OnLoopAsync(loop.Context);
    int fromScheduler = await loop.Context.GetTaskFactory(2).StartNew(() => PriorityContext.CurrentLevel);
    Console.WriteLine($"2. On the loop thread at level {level}; a task from GetTaskFactory(2) ran at level {fromScheduler}.");

    loop.Context.WorkDropped += (_, e) => Console.WriteLine($"   dropped: level {e.Level}, {e.Reason}");
}

// --- 3. Late work is never lost silently. -------------------------------------------------------------------------------
PriorityContext? finished = null;
PriorityContext.Run(() => { finished = PriorityContext.Current; });
finished!.WorkDropped += (_, e) => Console.WriteLine($"3. A post after the context finished was reported: level {e.Level}, {e.Reason}.");
finished.GetSynchronizationContext(1).Post(_ => Console.WriteLine("never runs"), null);

static async Task KeepLeaseAsync(List<string> order)
{
    await Prioritize(2);                         // completes at once: nothing is queued above level 2
    await Delay(TimeSpan.FromMilliseconds(5));   // the loop's own timer; resumes at level 2: the level is carried by the captured context
    order.Add($"lease refreshed at level {PriorityContext.CurrentLevel}");
}

static async Task ProcessAsync(List<string> order)
{
    await Prioritize(1);
    for (int step = 0; step < 3; step++)
    {
#pragma warning disable PA0002 // stands for 50 ms of CPU-bound work, which blocks the loop just as much: the sample shows that Yield lets urgent work in between
        System.Threading.Thread.Sleep(50);       // a CPU-bound part: nothing can interrupt it
#pragma warning restore PA0002
        order.Add($"step {step} at level {PriorityContext.CurrentLevel}");
        await Yield();                           // a checkpoint: anything more urgent runs now
    }
}

static async Task<int> OnLoopAsync(PriorityContext context)
{
    await context.Prioritize(1);                 // from a thread-pool thread: always hops onto the loop
    return PriorityContext.CurrentLevel;
}
