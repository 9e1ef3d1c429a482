// The README's usage block (tools/Snippets copies it there): a lease worker on one thread with an in-memory bus.
// dotnet run --project samples/Quickstart
// begin-snippet: quickstart
using PriorityAsync;
using static PriorityAsync.Priority;

var bus = new InMemoryBus(messages: 5, leaseTime: TimeSpan.FromSeconds(1));

// begin-snippet: quickstart-loop
PriorityContext.Run(async () =>                       // the calling thread becomes the loop; levels 0..2, 2 runs first
{
    var handling = new List<Task>();
    while (await bus.ReceiveAsync() is { } message)   // level 0 (the default): only when nothing more urgent waits
    {
        handling.Add(HandleAsync(message));
    }

    await Task.WhenAll(handling);
}, new PriorityContextOptions { Levels = 3 });

async Task HandleAsync(Message message)
{
    // begin-snippet: quickstart-lease
    using var leaseKeeping = new CancellationTokenSource();
    Task lease = KeepLeaseAsync(message, leaseKeeping.Token);   // starts at level 0, moves itself to level 2
    await Prioritize(1);                                        // the rest of this method runs at level 1
    await ProcessAsync(message);                                // callees inherit level 1, across every await
    leaseKeeping.Cancel();
    await lease;
    // end-snippet
    await bus.CompleteAsync(message);
}

async Task KeepLeaseAsync(Message message, CancellationToken stop)
{
    await Prioritize(2);                              // free when nothing above 2 waits; never busy-waits
    while (!stop.IsCancellationRequested)
    {
        try
        {
            await Delay(bus.LeaseTime / 4, stop);     // a loop timer: resumes at level 2, pool or no pool
        }
        catch (OperationCanceledException)
        {
            return;
        }

        await bus.RenewAsync(message);
    }
}
// end-snippet

async Task ProcessAsync(Message message)
{
    for (int step = 0; step < 5; step++)
    {
        Thread.Sleep(100);                            // a CPU-bound part: nothing else runs on this thread meanwhile
        await Task.Delay(100);                        // an I/O part: the loop runs other work
    }
}

Console.WriteLine($"{bus.Completed} messages completed, {bus.Lost} lost");   // lost: its lease ran out before a renewal

/// <summary>A message on the bus, with the moment its lease runs out.</summary>
public sealed class Message(int id)
{
    public int Id { get; } = id;

    public DateTime LeaseEnds { get; set; }

    public bool Lost { get; set; }
}

/// <summary>A bus that leases messages, in memory. Each call takes 20 ms; a lease not renewed within leaseTime is lost.</summary>
/// <remarks>Not thread-safe: every call here comes from the one loop thread.</remarks>
public sealed class InMemoryBus(int messages, TimeSpan leaseTime)
{
    private static readonly TimeSpan s_roundTrip = TimeSpan.FromMilliseconds(20);
    private readonly Queue<Message> _waiting = new(Enumerable.Range(1, messages).Select(id => new Message(id)));

    public TimeSpan LeaseTime => leaseTime;

    public int Completed { get; private set; }

    public int Lost { get; private set; }

    public async Task<Message?> ReceiveAsync()
    {
        await Task.Delay(s_roundTrip);
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

        await Task.Delay(s_roundTrip);
    }

    public async Task CompleteAsync(Message message)
    {
        if (IsLeased(message))
        {
            Completed++;
        }

        await Task.Delay(s_roundTrip);
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
