// The README's usage block (tools/Snippets copies it there): a lease worker on one thread with an in-memory bus.
// dotnet run --project samples/Quickstart
// begin-snippet: quickstart
using PriorityAsync;
using static PriorityAsync.Priority;

var bus = new InMemoryBus(messages: 5, leaseTime: TimeSpan.FromSeconds(1), refuseRenewals: args is ["--refuse-renewals"]);

// begin-snippet: quickstart-loop
PriorityContext.Run(async () =>                       // the calling thread becomes the loop; levels 0..2, 2 runs first
{
    while (await bus.ReceiveAsync() is { } message)   // level 0 (the default): only when nothing more urgent waits
    {
        // A child of the loop (Run waits for it and rethrows its exception), started at level 2: its lease keeper starts
        // at once, not after the other messages' processing at level 1 (a lease runs from the moment of receipt).
        Start(stop => HandleAsync(message, stop), level: 2);
    }
}, new PriorityContextOptions { Levels = 3 });

Console.WriteLine($"{bus.Completed} messages completed, {bus.Lost} lost");   // lost: its lease ran out before a renewal

async Task HandleAsync(Message message, CancellationToken stop)
{
    await TaskScope.RunAsync(async scope =>           // owns the lease keeper: it cannot outlive the message, nor fail unseen
    {
        scope.Start(token => KeepLeaseAsync(message, token), level: 2);
        await Prioritize(1);                          // the rest of this body runs at level 1
        await ProcessAsync(message);                  // callees inherit level 1, across every await
        scope.Cancel();                               // processed: stop keeping the lease
    }, stop);

    await bus.CompleteAsync(message);
}

async Task KeepLeaseAsync(Message message, CancellationToken stop)
{
    while (true)                                      // ends when stop is cancelled: Delay throws, and a cancelled child is no failure
    {
        await Delay(bus.LeaseTime / 4, stop);         // a loop timer: resumes at level 2, pool or no pool
        await bus.RenewAsync(message);
    }
}
// end-snippet

async Task ProcessAsync(Message message)
{
    for (int step = 0; step < 5; step++)
    {
        BusyFor(TimeSpan.FromMilliseconds(100));      // a CPU-bound part: nothing else runs on this thread meanwhile
        await Delay(TimeSpan.FromMilliseconds(100));  // stands for I/O (a database call): the loop runs other work meanwhile
    }
}

static void BusyFor(TimeSpan time)                    // stands for real work: keeps the CPU busy, as a computation would
{
    long end = Environment.TickCount64 + (long)time.TotalMilliseconds;
    while (Environment.TickCount64 < end)
    {
    }
}

/// <summary>A message on the bus, with the moment its lease runs out.</summary>
public sealed class Message(int id)
{
    public int Id { get; } = id;

    public DateTime LeaseEnds { get; set; }

    public bool Lost { get; set; }
}

/// <summary>A bus that leases messages, in memory. Each call takes 20 ms; a lease not renewed within leaseTime is lost.</summary>
/// <remarks>Not thread-safe: every call here comes from the one loop thread.</remarks>
public sealed class InMemoryBus(int messages, TimeSpan leaseTime, bool refuseRenewals = false)
{
    private static readonly TimeSpan s_roundTrip = TimeSpan.FromMilliseconds(20);
    private readonly Queue<Message> _waiting = new(Enumerable.Range(1, messages).Select(id => new Message(id)));

    public TimeSpan LeaseTime => leaseTime;

    public int Completed { get; private set; }

    public int Lost { get; private set; }

    public async Task<Message?> ReceiveAsync()
    {
        await Delay(s_roundTrip);                     // stands for the network round trip
        if (!_waiting.TryDequeue(out Message? message))
        {
            return null;
        }

        message.LeaseEnds = DateTime.UtcNow + leaseTime;
        return message;
    }

    public async Task RenewAsync(Message message)
    {
        if (IsLeased(message))                         // the bus judges the call when it arrives
        {
            message.LeaseEnds = DateTime.UtcNow + leaseTime;
        }

        await Delay(s_roundTrip);                     // stands for the network round trip
        if (refuseRenewals)
        {
            throw new IOException($"The bus refused to renew the lease of message {message.Id}.");
        }
    }

    public async Task CompleteAsync(Message message)
    {
        if (IsLeased(message))
        {
            Completed++;
        }

        await Delay(s_roundTrip);                     // stands for the network round trip
    }

    private bool IsLeased(Message message)
    {
        if (!message.Lost && DateTime.UtcNow > message.LeaseEnds)
        {
            message.Lost = true;
            Lost++;
        }

        return !message.Lost;
    }
}
// end-snippet
