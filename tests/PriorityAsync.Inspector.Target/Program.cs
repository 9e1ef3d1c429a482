using System.Diagnostics.Tracing;
using PriorityAsync;

// The inspector tests' target. It prints "ready" once its schedulers run, "inspector on" / "inspector off" when a session enables or
// disables the PriorityAsync event source's Inspector keyword, and answers one command per line of standard input:
//   slow <ms>     the worker runs SlowCallback at level 1, busy for <ms> ms ("done" once it ran; so for late-timer and fault)
//   late-timer    the worker runs TimerHost at level 0, which arms a loop timer (LeaseRefresh, level 2, due in 10 ms) and then
//                 stays busy 300 ms, so the timer fires at least 290 ms late
//   stall         the worker runs BlockingCallback at level 1 (it prints "blocking worker"), blocked until "release"; a level-2
//                 item (unless the loop took it first) and the heartbeat's timer wait behind it
//   pool-block    a pool thread runs PoolBlockingCallback (it prints "blocking pool"), blocked until "release"
//   churn <ms> <n>  the worker runs <n> items of ChurnItem at level 0 one after another, each busy for <ms> ms ("done" once all ran)
//   release       ends both blocks
//   fault         the worker's InvokeAsync(FaultingWork) throws InvalidOperationException("lease lost")
//   status        prints "status enabled=<any session> inspector=<Inspector keyword> sampler=<sampler threads>"
//   exit          ends the process (exit code 0)
// It also prints "stalled <scheduler>" when a stall watchdog reports one of its schedulers (the worker's and the pool's: 500 ms).
// With --plain it never touches PriorityAsync (the library is not even loaded): a .NET process the inspector must turn down.
if (args.Contains("--plain"))
{
    Console.WriteLine("ready");
    while (Console.ReadLine() is { } command && command != "exit")
    {
        Console.WriteLine($"done {command}");
    }

    return 0;
}

return await Worker.RunAsync();

static class Worker
{
private static TaskCompletionSource? s_leaseRefreshed;
private static TaskCompletionSource? s_slowDone;
private static TaskCompletionSource? s_churnDone;
private static int s_churnLeft;
private static int s_churnMilliseconds;

public static async Task<int> RunAsync()
{
var gate = new ManualResetEventSlim(false);
using var worker = new PriorityContextThread(new PriorityContextOptions
{
    Name = "worker",
    Levels = 3,
    StallTimeout = TimeSpan.FromMilliseconds(500),
    TimeSlice = TimeSpan.FromMilliseconds(20),
});
using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = "pool", Levels = 2, ThreadCount = 2, StallTimeout = TimeSpan.FromMilliseconds(500) });
PriorityContext context = worker.Context;
context.UnhandledException += (_, e) => e.Handled = true;
context.StallDetected += (_, _) => Console.WriteLine("stalled worker");
pool.StallDetected += (_, _) => Console.WriteLine("stalled pool");

// A little steady work, so that levels have figures: a heartbeat at level 0 every 20 ms on the loop's own timer.
using ITimer heartbeat = context.GetTimeProvider(0).CreateTimer(Heartbeat, null, TimeSpan.Zero, TimeSpan.FromMilliseconds(20));
await context.InvokeAsync(() => Task.CompletedTask); // the loop runs
Console.WriteLine("ready");

var watch = new Thread(() => WatchInspector()) { IsBackground = true };
watch.Start();

string? line;
while ((line = Console.ReadLine()) is not null)
{
    string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
    switch (words.FirstOrDefault())
    {
        case "slow":
            int ms = int.Parse(words[1], System.Globalization.CultureInfo.InvariantCulture);
            s_slowDone = new TaskCompletionSource();
            context.GetSynchronizationContext(1).Post(SlowCallback, ms);
            await s_slowDone.Task;
            break;
        case "churn":
            s_churnMilliseconds = int.Parse(words[1], System.Globalization.CultureInfo.InvariantCulture);
            s_churnLeft = int.Parse(words[2], System.Globalization.CultureInfo.InvariantCulture);
            s_churnDone = new TaskCompletionSource();
            context.GetSynchronizationContext(0).Post(ChurnItem, null);
            await s_churnDone.Task;
            break;
        case "late-timer":
            s_leaseRefreshed = new TaskCompletionSource();
            context.GetSynchronizationContext(0).Post(TimerHost, context);
            await s_leaseRefreshed.Task;
            break;
        case "stall":
            context.GetSynchronizationContext(1).Post(BlockingCallback, gate);
            context.GetSynchronizationContext(2).Post(static _ => { }, null);
            break;
        case "pool-block":
            pool.GetSynchronizationContext(1).Post(PoolBlockingCallback, gate);
            break;
        case "release":
            gate.Set();
            break;
        case "fault":
            try
            {
                await context.InvokeAsync(FaultingWork, 1);
            }
            catch (InvalidOperationException)
            {
            }

            break;
        case "status":
            Console.WriteLine($"status enabled={Source()?.IsEnabled() ?? false} inspector={InspectorOn()} sampler={SamplerThreads()}");
            break;
        case "exit":
            return 0;
    }

    Console.WriteLine($"done {line}");
}

return 0;
}

static void Heartbeat(object? state)
{
}

static void SlowCallback(object? milliseconds)
{
    Busy((int)milliseconds!);
    s_slowDone?.TrySetResult();
}

static void ChurnItem(object? state)
{
    Busy(s_churnMilliseconds);
    if (--s_churnLeft > 0)
    {
        SynchronizationContext.Current!.Post(ChurnItem, null); // the next one, behind whatever else is queued at level 0
    }
    else
    {
        s_churnDone?.TrySetResult();
    }
}

static void TimerHost(object? state)
{
    var context = (PriorityContext)state!;
    context.GetTimeProvider(2).CreateTimer(LeaseRefresh, null, TimeSpan.FromMilliseconds(10), Timeout.InfiniteTimeSpan);
    Busy(300);
}

static void LeaseRefresh(object? state) => s_leaseRefreshed?.TrySetResult();

static void BlockingCallback(object? gate)
{
    Console.WriteLine("blocking worker");
    ((ManualResetEventSlim)gate!).Wait();
}

static void PoolBlockingCallback(object? gate)
{
    Console.WriteLine("blocking pool");
    ((ManualResetEventSlim)gate!).Wait();
}

static Task FaultingWork() => throw new InvalidOperationException("lease lost");

static void Busy(int milliseconds)
{
    var clock = System.Diagnostics.Stopwatch.StartNew();
    while (clock.ElapsedMilliseconds < milliseconds)
    {
        Thread.SpinWait(100);
    }
}

static EventSource? Source() => EventSource.GetSources().FirstOrDefault(s => s.Name == "PriorityAsync");

static bool InspectorOn() => Source()?.IsEnabled(EventLevel.Informational, (EventKeywords)0x2) ?? false;

// The sampler's thread by its name (Linux: /proc/self/task/*/comm holds the first 15 characters of a thread's name).
static int SamplerThreads() =>
    Directory.Exists("/proc/self/task")
        ? Directory.GetDirectories("/proc/self/task").Count(task => File.Exists(Path.Combine(task, "comm")) && File.ReadAllText(Path.Combine(task, "comm")).StartsWith("PriorityAsync i", StringComparison.Ordinal))
        : -1;

static void WatchInspector()
{
    bool on = false;
    while (true)
    {
        bool now = InspectorOn();
        if (now != on)
        {
            on = now;
            Console.WriteLine(on ? "inspector on" : "inspector off");
        }

        Thread.Sleep(10);
    }
}
}
