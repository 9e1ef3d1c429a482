using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using RabbitMQ.Client;
using RabbitMQ.Client.Exceptions;

namespace MessageBus.RabbitMq;

/// <summary>
/// Connecting to RabbitMQ as every sample does: an AMQP URI checked before anything connects, and a failed connection as one line
/// naming the server (never the password). The lease queue and the RabbitMqConsumers sample both connect through it.
/// </summary>
public static class RabbitMqConnection
{
    /// <summary>A connection factory for <paramref name="uri"/> (<c>amqp://user:password@host:port/vhost</c>), without connecting.</summary>
    /// <exception cref="ArgumentException">It is not an AMQP URI with a host; the message never repeats it (it may hold a password).</exception>
    public static ConnectionFactory CreateFactory(string? uri)
    {
        if (!Uri.TryCreate(uri, UriKind.Absolute, out Uri? parsed) || parsed.Scheme is not ("amqp" or "amqps") || parsed.Host.Length == 0)
        {
            throw new ArgumentException(
                "the connection string must be an AMQP URI such as amqp://user:password@host:5672/ (got something else; not repeated, it may hold a password).",
                nameof(uri));
        }

        return new ConnectionFactory { Uri = parsed, RequestedConnectionTimeout = TimeSpan.FromSeconds(10) };
    }

    /// <summary>Where <paramref name="factory"/> connects, for people: <c>host:port</c>.</summary>
    public static string Endpoint(ConnectionFactory factory)
    {
        ArgumentNullException.ThrowIfNull(factory);
        return $"{factory.HostName}:{factory.Port}";
    }

    /// <summary>Opens a connection named <paramref name="name"/> (<c>rabbitmqctl list_connections</c> shows it).</summary>
    /// <exception cref="QueueConnectionException">Refused, unknown host, credentials refused, or no handshake: "Cannot connect to
    /// RabbitMQ at host:port: why".</exception>
    public static async Task<IConnection> ConnectAsync(ConnectionFactory factory, string name, CancellationToken cancellationToken = default)
    {
        (IConnection? connection, string? why, Exception? failure, _) = await TryConnectAsync(factory, name, cancellationToken).ConfigureAwait(false);
        return connection ?? throw new QueueConnectionException("RabbitMQ", Endpoint(factory), why!, failure);
    }

    /// <summary>One attempt: the connection, or why not in one line and whether the server accepts TCP connections (then the AMQP
    /// handshake failed there: a busy machine or server, worth retrying; refused, unknown host and refused credentials are not).</summary>
    internal static async Task<(IConnection? Connection, string? Why, Exception? Failure, bool ServerAccepts)> TryConnectAsync(
        ConnectionFactory factory, string name, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(factory);
        factory.ClientProvidedName = name;
        TimeSpan limit = factory.RequestedConnectionTimeout;
        using var attempt = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        attempt.CancelAfter(limit);
        Task<IConnection> connecting = factory.CreateConnectionAsync(attempt.Token);
        try
        {
            // Bounded here: the client waits for the server's first frame without a limit (a server that accepts connections and
            // says nothing holds it forever); a connection that opens after all is closed.
            return (await connecting.WaitAsync(limit, cancellationToken).ConfigureAwait(false), null, null, false);
        }
        catch (Exception e) when (e is TimeoutException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            _ = connecting.ContinueWith(t => t.Result.Dispose(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
            bool accepts = await ServerProbe.TryConnectAsync(factory.HostName, factory.Port, limit).ConfigureAwait(false) is null;
            return (null, accepts
                ? $"the server accepts connections but the AMQP handshake did not finish within the connect timeout ({limit.TotalMilliseconds:0} ms): a busy machine or server, or not a RabbitMQ server"
                : $"no answer within the connect timeout ({limit.TotalMilliseconds:0} ms)", e, accepts);
        }
        catch (BrokerUnreachableException e)
        {
            // The reason is somewhere in the chain (an AggregateException of the endpoints tried, a ConnectFailureException...).
            var chain = new List<Exception>();
            for (Exception? reason = e; reason is not null; reason = reason is AggregateException { InnerExceptions.Count: 1 } a ? a.InnerExceptions[0] : reason.InnerException)
            {
                chain.Add(reason);
            }

            string last = chain[^1].Message.Split('\n', 2)[0].TrimEnd('.');
            string? why = chain.OfType<AuthenticationFailureException>().Any() ? "the user name or password was refused"
                : chain.OfType<SocketException>().FirstOrDefault() is { } socket ? socket.SocketErrorCode switch
                {
                    SocketError.ConnectionRefused => "connection refused (is the server running?)",
                    SocketError.HostNotFound or SocketError.TryAgain or SocketError.NoData => "unknown host",
                    _ => null,
                }
                : null;
            bool accepts = why is null
                && await ServerProbe.TryConnectAsync(factory.HostName, factory.Port, factory.RequestedConnectionTimeout).ConfigureAwait(false) is null;
            return (null, why ?? (accepts ? $"the server accepts connections but the AMQP handshake failed ({last}): a busy machine or server, or not a RabbitMQ server" : last), e, accepts);
        }
    }
}
