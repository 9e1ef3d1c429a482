namespace BrokerWorker.Modes;

/// <summary>The worker's three kinds of work, most urgent first.</summary>
public enum Activity
{
    /// <summary>Renewing, completing or abandoning a lease: the broker's clock is running.</summary>
    Lease,

    /// <summary>Processing a message.</summary>
    Processing,

    /// <summary>Taking a new message from the broker.</summary>
    Receiving,
}
