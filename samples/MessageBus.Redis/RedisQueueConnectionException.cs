using System;

namespace MessageBus.Redis;

/// <summary>
/// The queue could not use its server: unreachable, refused, timed out, the credentials refused, or the connection lost for longer
/// than the reconnect timeout. The message names the host and port, never the password.
/// </summary>
public sealed class RedisQueueConnectionException : Exception
{
    /// <summary>Creates the exception.</summary>
    public RedisQueueConnectionException()
        : this("Cannot connect to Redis.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    public RedisQueueConnectionException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    public RedisQueueConnectionException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    internal RedisQueueConnectionException(string endpoint, string reason, Exception? innerException)
        : base($"Cannot connect to Redis at {endpoint}: {reason}", innerException)
    {
        Endpoint = endpoint;
    }

    /// <summary>The server the queue tried to reach (<c>host:port</c>).</summary>
    public string? Endpoint { get; }
}
