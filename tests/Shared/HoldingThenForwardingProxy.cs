using System.Net;
using System.Net.Sockets;

namespace TestSupport;

/// <summary>A loopback listener that holds every connection silent, or closes it at once, until <see cref="Forward"/>; then relays
/// new ones to the server: a broker too busy to finish a handshake (or at its client limit), then back. With no server, it never
/// relays. Shared by the Redis and PostgreSQL queue tests.</summary>
internal sealed class HoldingThenForwardingProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly (string Host, int Port)? _server;
    private readonly bool _closeAtOnce;
    private readonly List<TcpClient> _clients = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _accepting;
    private volatile bool _forward;
    private int _held;

    public HoldingThenForwardingProxy((string Host, int Port)? server, bool closeAtOnce)
    {
        _server = server;
        _closeAtOnce = closeAtOnce;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>How many connections were held silent or closed.</summary>
    public int Held => Volatile.Read(ref _held);

    /// <summary>From now on, relays each new connection to the server (connections held so far stay silent).</summary>
    public void Forward() => _forward = true;

    /// <summary>Waits until the client has scheduled a retry (<paramref name="retried"/>) or its attempt to connect ended, then
    /// forwards: the retry, not the first attempt, reaches the server.</summary>
    public async Task ForwardOnceRetriedAsync(Func<bool> retried, Task connecting, TimeSpan patience)
    {
        using (var timeout = new CancellationTokenSource(patience))
        {
            while (!retried() && !connecting.IsCompleted)
            {
                await Task.Delay(10, timeout.Token);
            }
        }

        Forward();
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await _accepting.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        lock (_clients)
        {
            foreach (TcpClient client in _clients)
            {
                client.Dispose();
            }
        }

        _stop.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            TcpClient client = await _listener.AcceptTcpClientAsync(_stop.Token);
            if (!_forward || _server is null)
            {
                Interlocked.Increment(ref _held);
                if (_closeAtOnce)
                {
                    client.Dispose();
                    continue;
                }
            }

            lock (_clients)
            {
                _clients.Add(client);
            }

            if (!_forward || _server is not { } server)
            {
                continue;
            }

            var upstream = new TcpClient();
            lock (_clients)
            {
                _clients.Add(upstream);
            }

            await upstream.ConnectAsync(server.Host, server.Port, _stop.Token);
            _ = client.GetStream().CopyToAsync(upstream.GetStream(), _stop.Token);
            _ = upstream.GetStream().CopyToAsync(client.GetStream(), _stop.Token);
        }
    }
}
