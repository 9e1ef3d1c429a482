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
//   inversion <n> priority inversion on the worker: level-0 code holds the PriorityLock 'lease' across an await (Task.Delay(2)) in a
//                 loop while a level-1 flood of 5 ms items runs; a level-2 keeper takes the lock every 20 ms. Ends ("done") once the
//                 keeper found the lock held <n> times (each of those waits raised the holder's region from level 0 to 2), printing
//                 "inversion keeper waited <worst> ms at worst"
//   lock-held     level-0 code on the worker holds the PriorityLock 'ledger' across an await until "release"; a level-2 keeper waits
//                 for it (the holder is raised, and stays raised). "done" once the keeper's wait was reported long (LockWaitLong,
//                 at the worker's 500 ms stall timeout), as an EventListener in this process saw it
//   lock-off      code off every scheduler (a thread-pool thread) holds the PriorityLock 'journal' until "release"; a level-2 keeper
//                 on the worker waits for it (nothing can raise the holder). "done" once its wait was reported long, as for lock-held
//   release       ends both blocks and the locks' holdings
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
        case "inversion":
            await InversionAsync(context, int.Parse(words[1], System.Globalization.CultureInfo.InvariantCulture));
            break;
        case "lock-held":
            Locks.LongWaits ??= new LongWaitWatch();
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _ = context.InvokeAsync(
                async () =>
                {
                    using (await Locks.Ledger.LockAsync())
                    {
                        holding.SetResult();
                        await Locks.Gate.Task; // held across an await, until "release"
                    }
                },
                0);
            await holding.Task;
            _ = context.InvokeAsync(LedgerKeeperAsync, 2);
            await Locks.LongWaits.Reported("the PriorityLock 'ledger'");
            break;
        case "lock-off":
            Locks.LongWaits ??= new LongWaitWatch();
            Locks.JournalHolding = await Task.Run(async () => await Locks.Journal.LockAsync()); // a pool thread: off every scheduler
            _ = context.InvokeAsync(JournalKeeperAsync, 2);
            await Locks.LongWaits.Reported("the PriorityLock 'journal'");
            break;
        case "release":
            gate.Set();
            Locks.Gate.TrySetResult();
            Locks.JournalHolding?.Dispose();
            Locks.JournalHolding = null;
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

// The lock scenario of docs/concepts.md ("Priority inversion"), on the worker: the keeper (level 2) needs the lock that level-0 code
// holds across an await, while level 1 floods. The holder's continuation waits behind the flood until the keeper's wait raises it.
static async Task InversionAsync(PriorityContext context, int contendedWaits)
{
    using var stop = new CancellationTokenSource();
    var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
    Task holder = context.InvokeAsync(() => LeaseHolderAsync(holding, stop.Token), 0);
    await holding.Task; // the flood would starve level 0 before it took the lock
    Task flood = context.InvokeAsync(() => FloodAsync(stop.Token), 1);
    Locks.ContendedWaits = contendedWaits;
    double worst = await context.InvokeAsync(LeaseKeeperAsync, 2);
    stop.Cancel();
    await Task.WhenAll(holder, flood);
    Console.WriteLine($"inversion keeper waited {worst.ToString("0.0", System.Globalization.CultureInfo.InvariantCulture)} ms at worst");
}

static async Task LeaseHolderAsync(TaskCompletionSource holding, CancellationToken stop)
{
    while (!stop.IsCancellationRequested)
    {
        using (await Locks.Lease.LockAsync(CancellationToken.None)) // the stop ends the loop, not a wait
        {
            holding.TrySetResult();
            await Task.Delay(2, CancellationToken.None); // an I/O call inside the critical section
        }
    }
}

static async Task FloodAsync(CancellationToken stop)
{
    while (!stop.IsCancellationRequested)
    {
        Busy(5);
        await Priority.Yield(); // back into level 1's queue
    }
}

static async Task<double> LeaseKeeperAsync()
{
    double worst = 0;
    for (int contended = 0; contended < Locks.ContendedWaits;)
    {
        await Task.Delay(20);
        PriorityLock.LockAwaitable wait = Locks.Lease.LockAsync();
        contended += wait.IsCompleted ? 0 : 1; // held: this wait raises the holder
        var clock = System.Diagnostics.Stopwatch.StartNew();
        using (await wait)
        {
            worst = Math.Max(worst, clock.Elapsed.TotalMilliseconds);
        }
    }

    return worst;
}

static async Task LedgerKeeperAsync()
{
    using (await Locks.Ledger.LockAsync())
    {
    }
}

static async Task JournalKeeperAsync()
{
    using (await Locks.Journal.LockAsync())
    {
    }
}

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

/// <summary>The lock scenarios' state, in a type of its own: loaded when a lock scenario first runs, so that with --plain (which never
/// reaches them) the library is not loaded to lay out Worker's fields.</summary>
static class Locks
{
    public static readonly PriorityLock Lease = new() { Name = "lease" };
    public static readonly PriorityLock Ledger = new() { Name = "ledger" };
    public static readonly PriorityLock Journal = new() { Name = "journal" };
    public static readonly TaskCompletionSource Gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
    public static PriorityLock.Releaser? JournalHolding;
    public static LongWaitWatch? LongWaits;
    public static int ContendedWaits;
}

/// <summary>Sees the library's long-lock-wait reports (event 15) for the lock scenarios: created by the first, it enables the source at
/// Warning level only (the inspector's keyword stays as the inspector set it). The event reaches an inspector's session before it
/// reaches a listener in the process (EventSource writes to EventPipe first), so once this saw it, the inspector has it too.</summary>
sealed class LongWaitWatch : EventListener
{
    private readonly List<(string Lock, TaskCompletionSource Seen)> _waits = [];

    public Task Reported(string lockName)
    {
        lock (_waits)
        {
            var seen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waits.Add((lockName, seen));
            return seen.Task;
        }
    }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "PriorityAsync")
        {
            EnableEvents(eventSource, EventLevel.Warning);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        if (eventData.EventName == "LockWaitLong" && eventData.Payload?[2] is string lockName)
        {
            Console.WriteLine($"long lock wait reported for {lockName}");
            lock (_waits)
            {
                foreach ((string name, TaskCompletionSource seen) in _waits)
                {
                    if (name == lockName)
                    {
                        seen.TrySetResult();
                    }
                }
            }
        }
    }
}

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
