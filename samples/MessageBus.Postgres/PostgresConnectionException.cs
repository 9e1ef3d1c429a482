using System;

namespace MessageBus.Postgres;

/// <summary>
/// The queue could not reach its database: unreachable, refused, timed out, or the server refused the session (the credentials, the
/// database, a startup parameter). The message names the host, port, database and user, never the password.
/// </summary>
public sealed class PostgresConnectionException : Exception
{
    /// <summary>Creates the exception.</summary>
    public PostgresConnectionException()
        : this("Cannot connect to PostgreSQL.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    public PostgresConnectionException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    public PostgresConnectionException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    internal PostgresConnectionException(string host, int port, string database, string? user, string reason, Exception? innerException)
        : base($"Cannot connect to PostgreSQL at {host}:{port}, database '{database}'{(user is null ? "" : $", user '{user}'")}: {reason}", innerException)
    {
        Host = host;
        Port = port;
        Database = database;
    }

    /// <summary>The host the queue tried to reach.</summary>
    public string? Host { get; }

    /// <summary>The port the queue tried to reach.</summary>
    public int Port { get; }

    /// <summary>The database the queue tried to open.</summary>
    public string? Database { get; }
}
