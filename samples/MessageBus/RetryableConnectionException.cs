using System;

namespace MessageBus;

/// <summary>Thrown by an attempt that <see cref="Reconnector.RunAsync"/> runs: its connection failed in a way a retry may mend (lost,
/// or a first connection that a server accepted but did not complete).</summary>
/// <param name="why">The failure in one line, never the connection string.</param>
/// <param name="cause">The client's exception.</param>
/// <param name="reconnecting">Whether a connection was lost (the message says "reconnecting"), rather than a first one not made
/// ("retrying").</param>
public sealed class RetryableConnectionException(string why, Exception? cause, bool reconnecting) : Exception(why, cause)
{
    /// <summary>Whether a connection was lost, rather than a first one not made.</summary>
    public bool Reconnecting { get; } = reconnecting;
}
