using System;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace SocketCompletions;

/// <summary>
/// A request/reply server on 127.0.0.1 that runs on its own thread with blocking socket calls, so that it never needs the
/// thread pool: it stands for the remote party, which a starved pool in this process must not slow down.
/// </summary>
/// <remarks>
/// Protocol: the client sends 8 bytes; the server waits <see cref="ReplyDelay"/> (so that the client's receive is pending, not
/// completed synchronously), then replies with 8 bytes: <see cref="Stopwatch.GetTimestamp"/> taken just before the send. Client and
/// server share the process's clock, so the client's timestamp when its continuation runs minus this one is how late the
/// completion reached the client's code.
/// </remarks>
internal sealed class LoopbackServer : IDisposable
{
    /// <summary>How long the server waits before replying.</summary>
    public static readonly TimeSpan ReplyDelay = TimeSpan.FromMilliseconds(1);

    private readonly Socket _listener;
    private readonly Thread _thread;

    public LoopbackServer()
    {
        _listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(1);
        EndPoint = (IPEndPoint)_listener.LocalEndPoint!;
        _thread = new Thread(Serve) { IsBackground = true, Name = "Loopback server" };
        _thread.Start();
    }

    /// <summary>Where the server listens (127.0.0.1, a port chosen by the OS).</summary>
    public IPEndPoint EndPoint { get; }

    public void Dispose() => _listener.Dispose();

    private void Serve()
    {
        try
        {
            using Socket connection = _listener.Accept();
            connection.NoDelay = true;
            Span<byte> request = stackalloc byte[8];
            Span<byte> reply = stackalloc byte[8];
            while (ReceiveExactly(connection, request))
            {
                Thread.Sleep(ReplyDelay);
                BinaryPrimitives.WriteInt64LittleEndian(reply, Stopwatch.GetTimestamp());
                connection.Send(reply);
            }
        }
        catch (SocketException)
        {
            // The client went away: the measurement is over.
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private static bool ReceiveExactly(Socket socket, Span<byte> buffer)
    {
        int received = 0;
        while (received < buffer.Length)
        {
            int n = socket.Receive(buffer[received..]);
            if (n == 0)
            {
                return false;
            }

            received += n;
        }

        return true;
    }
}
