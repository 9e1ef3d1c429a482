namespace LeaseWorker.Core;

/// <summary>The three kinds of work of the worker, most urgent first.</summary>
public enum Activity
{
    /// <summary>Keeping a lease alive: refreshing, completing or abandoning it, and handling a fresh delivery, whose lease is already
    /// ticking (the bus's clock is running).</summary>
    Lease,

    /// <summary>Processing a message.</summary>
    Processing,

    /// <summary>Taking a new message from the bus.</summary>
    Receiving,
}
