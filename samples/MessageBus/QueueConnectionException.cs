using System;

namespace MessageBus;

/// <summary>
/// A lease queue could not use its server: unreachable, refused, timed out, the session or the credentials refused, or the
/// connection lost for longer than the queue's reconnect timeout. The message is one line naming the server (and the database and
/// user where there are), never the password.
/// </summary>
public sealed class QueueConnectionException : Exception
{
    /// <summary>Creates the exception with a message.</summary>
    public QueueConnectionException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception: "Cannot connect to <paramref name="server"/> at <paramref name="endpoint"/>: <paramref name="reason"/>".</summary>
    /// <param name="server">The server's kind and what else identifies the session, for example <c>PostgreSQL</c>.</param>
    /// <param name="endpoint">Where: <c>host:port</c>, and for example <c>, database 'q', user 'u'</c>.</param>
    /// <param name="reason">Why, in one line.</param>
    /// <param name="innerException">The client's exception.</param>
    public QueueConnectionException(string server, string endpoint, string reason, Exception? innerException)
        : base($"Cannot connect to {server} at {endpoint}: {reason}", innerException)
    {
        Endpoint = endpoint;
    }

    /// <summary>Where the queue tried to connect: <c>host:port</c> and what else names the session (a database, a user).</summary>
    public string? Endpoint { get; }
}
