using System;
using System.Threading;
using System.Threading.Tasks;

namespace SyncOverAsync;

/// <summary>
/// The remote service the handler calls: a <see cref="Task.Delay(TimeSpan)"/> standing for the network round trip (the seed
/// fetched a web page, about 900 ms). Like a socket's completion, the delay's completion needs a thread-pool thread (timers fire on
/// the pool), and the continuation after it goes where the caller's <c>await</c> captured: the pool, or a loop's level.
/// </summary>
internal sealed class Backend(TimeSpan latency)
{
    private int _completed;

    /// <summary>Gets the number of calls that came back.</summary>
    public int Completed => Volatile.Read(ref _completed);

    /// <summary>One call. With <paramref name="fail"/>, it fails the way the seed's example does, after the round trip.</summary>
    public async Task<int> CallAsync(bool fail = false)
    {
        await Task.Delay(latency);
        Interlocked.Increment(ref _completed);
        if (fail)
        {
            throw new InvalidOperationException("Operation was invalid");
        }

        return 200;
    }
}
