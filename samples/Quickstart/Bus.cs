using static PriorityAsync.Priority;

/// <summary>A message on the bus, with the moment its lease runs out.</summary>
public sealed class Message(int id)
{
    /// <summary>The message's number, from 1.</summary>
    public int Id { get; } = id;

    /// <summary>When the lease runs out unless it is renewed before.</summary>
    public DateTime LeaseEnds { get; set; }

    /// <summary>Whether the lease ran out: the bus took the message back.</summary>
    public bool Lost { get; set; }
}

/// <summary>A bus that leases messages, in memory. Each call takes 20 ms; an unrenewed lease is lost.</summary>
/// <remarks>Not thread-safe: every call comes from the loop thread, and waits on its timers (Priority.Delay).</remarks>
public sealed class InMemoryBus(int messages, TimeSpan leaseTime)
{
    private static readonly TimeSpan s_roundTrip = TimeSpan.FromMilliseconds(20);
    private readonly Queue<Message> _waiting = new(Enumerable.Range(1, messages).Select(id => new Message(id)));

    /// <summary>How long a lease lasts from its receipt or its last renewal.</summary>
    public TimeSpan LeaseTime => leaseTime;

    /// <summary>The messages completed while their lease held.</summary>
    public int Completed { get; private set; }

    /// <summary>The messages whose lease ran out before a renewal or the completion.</summary>
    public int Lost { get; private set; }

    /// <summary>The next message, leased from now; null when there is none left.</summary>
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

    /// <summary>Extends the lease by <see cref="LeaseTime"/>, if it has not run out yet.</summary>
    public async Task RenewAsync(Message message)
    {
        if (IsLeased(message))                        // the bus judges the call when it arrives
        {
            message.LeaseEnds = DateTime.UtcNow + leaseTime;
        }

        await Delay(s_roundTrip);
    }

    /// <summary>Completes the message: counted as completed if its lease still holds.</summary>
    public async Task CompleteAsync(Message message)
    {
        if (IsLeased(message))
        {
            Completed++;
        }

        await Delay(s_roundTrip);
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

/// <summary>Stands for real work.</summary>
public static class Cpu
{
    /// <summary>Keeps the CPU busy for <paramref name="time"/>, as a computation would.</summary>
    public static void Work(TimeSpan time)
    {
        long end = Environment.TickCount64 + (long)time.TotalMilliseconds;
        while (Environment.TickCount64 < end)
        {
        }
    }
}
