using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using MessageBus;

namespace BrokerWorker.Bus;

/// <summary>
/// A real broker as the coordinator and the worker processes use it: one queue (one mode's) behind the workers' <see cref="IMessageBus"/>
/// (<see cref="LeaseQueueBus"/> over the broker's <see cref="ILeaseQueue"/>), and what the workers' interface does not carry: set-up,
/// the producer, the server's CPU, and for <c>--bus-cost</c> the plain client loop the bus is compared with.
/// </summary>
/// <param name="queue">The broker's queue; the broker owns it.</param>
/// <param name="where">The server for people, in one phrase: "PostgreSQL at host:port, database 'q', user 'u'".</param>
public abstract class Broker(ILeaseQueue queue, string where) : IAsyncDisposable
{
    /// <summary>The workers' bus over the queue.</summary>
    public IMessageBus Bus { get; } = new LeaseQueueBus(queue);

    /// <summary>The server for people, for a one-line error: "PostgreSQL at host:port, ...".</summary>
    public string Where => where;

    /// <summary>How often this process's operations lost their connection and retried.</summary>
    public abstract long Reconnects { get; }

    /// <summary>What <c>--bus-cost</c> compares the bus with, after the broker's name: "plain Npgsql loop (...)".</summary>
    public abstract string PlainLoop { get; }

    /// <summary>Connects, creates the queue if missing, and (<paramref name="purge"/>) empties it; otherwise warms a connection.</summary>
    public abstract Task SetUpAsync(bool purge);

    /// <summary>Enqueues messages, in order.</summary>
    public abstract Task EnqueueAsync(IReadOnlyList<string> payloads);

    /// <summary>The server's CPU time so far (all its processes or threads), or null when it cannot be read from here.</summary>
    public abstract Task<TimeSpan?> ServerCpuAsync();

    /// <summary><c>--bus-cost</c>: receive + renew + complete cycles of the plain client loop on the filled queue for <paramref name="duration"/>.</summary>
    public abstract Task<(long Cycles, TimeSpan Elapsed)> PlainCyclesAsync(TimeSpan lease, TimeSpan duration);

    /// <summary>What the server promises for a write it has answered (an fsync per write, or none): the figures depend on it.</summary>
    public abstract Task<string> DurabilityAsync();

    /// <summary>Drops the queue.</summary>
    public abstract Task DropAsync();

    /// <inheritdoc/>
    public abstract ValueTask DisposeAsync();

    /// <summary>
    /// The CPU time of the processes on this machine that <paramref name="which"/> picks (by process id and name), with the time of
    /// their children that have exited (<c>cutime</c>, <c>cstime</c>: a server that forks a process per connection). Null for a
    /// server elsewhere (<paramref name="host"/> not a loopback address) or without /proc.
    /// </summary>
    protected static TimeSpan? LocalCpu(string? host, Func<int, string, bool> which)
    {
        bool local = host is "localhost" || (IPAddress.TryParse(host, out IPAddress? address) && IPAddress.IsLoopback(address));
        if (!local || !Directory.Exists("/proc"))
        {
            return null;
        }

        long ticks = 0;
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            try
            {
                if (!int.TryParse(Path.GetFileName(dir), out int pid) || !which(pid, File.ReadAllText(Path.Combine(dir, "comm")).Trim()))
                {
                    continue;
                }

                // Fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 14th to 17th of the line.
                string stat = File.ReadAllText(Path.Combine(dir, "stat"));
                string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                ticks += long.Parse(fields[11]) + long.Parse(fields[12]) + long.Parse(fields[13]) + long.Parse(fields[14]);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
            {
                // The process exited while being read, or is not ours to read.
            }
        }

        return TimeSpan.FromSeconds(ticks / 100.0); // USER_HZ is 100 on Linux
    }

    /// <summary>The id of the process on this machine that listens on TCP <paramref name="port"/> (from /proc: the listening socket's
    /// inode, then the process holding it), or null when none can be seen.</summary>
    protected static int? Listener(int port)
    {
        string local = $":{port:X4}";
        HashSet<string> sockets = [.. new[] { "/proc/net/tcp", "/proc/net/tcp6" }.Where(File.Exists).SelectMany(File.ReadLines)
            .Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(f => f.Length > 9 && f[1].EndsWith(local, StringComparison.Ordinal) && f[3] == "0A") // 0A: LISTEN
            .Select(f => $"socket:[{f[9]}]")];
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            try
            {
                if (int.TryParse(Path.GetFileName(dir), out int pid)
                    && Directory.EnumerateFiles(Path.Combine(dir, "fd")).Any(fd => new FileInfo(fd).LinkTarget is { } target && sockets.Contains(target)))
                {
                    return pid;
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Not ours to read, or gone.
            }
        }

        return null;
    }
}
