using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace MessageBus;

/// <summary>
/// Asks the network what a broker client's "could not connect" does not say: whether anything accepts TCP connections at an
/// address. A server that accepts them but does not complete the client's handshake is busy (or not the broker): worth retrying;
/// a refused connection, an unknown host or no answer is not.
/// </summary>
public static class ServerProbe
{
    /// <summary>Opens one TCP connection to <paramref name="host"/>:<paramref name="port"/> and closes it at once.</summary>
    /// <param name="host">A host name or IP address.</param>
    /// <param name="port">The TCP port.</param>
    /// <param name="timeout">How long to wait for the connection.</param>
    /// <returns><see langword="null"/> when the connection was accepted; otherwise why not: the <see cref="SocketException"/> (refused,
    /// unknown host, unreachable network), or a <see cref="TimeoutException"/> when nothing answered within <paramref name="timeout"/>.</returns>
    public static async Task<Exception?> TryConnectAsync(string host, int port, TimeSpan timeout)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(host);
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(host, port, cancel.Token).ConfigureAwait(false);
            return null;
        }
        catch (SocketException e)
        {
            return e;
        }
        catch (OperationCanceledException)
        {
            return new TimeoutException($"No answer from {host}:{port} within {timeout.TotalMilliseconds:0} ms.");
        }
    }
}
