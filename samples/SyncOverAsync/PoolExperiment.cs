using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace SyncOverAsync;

/// <summary>
/// The seed's thread-pool experiment, scaled to seconds: a request arrives every <c>interval</c> (Task.Run of the handler), each makes
/// one backend call; count the requests served before the window closes. With <see cref="Style.Wait"/> every request holds a pool
/// thread for the whole call, and the call's own completion needs a pool thread too: the pool has to grow to keep up, and it grows
/// slowly.
/// </summary>
internal static class PoolExperiment
{
    /// <summary>How long the end of a run may take (requests arriving after the window are turned away at once).</summary>
    public static readonly TimeSpan DrainTimeout = TimeSpan.FromSeconds(60);

    public static PoolResult Run(Style style, TimeSpan duration, TimeSpan interval, TimeSpan latency)
    {
        var backend = new Backend(latency);
        var requests = new List<Task>();
        int served = 0;
        int closed = 0;
        int peakThreads = ThreadPool.ThreadCount;
        long peakQueue = 0;

        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < duration)
        {
            requests.Add(Task.Run(ServeAsync));
            peakThreads = Math.Max(peakThreads, ThreadPool.ThreadCount);
            peakQueue = Math.Max(peakQueue, ThreadPool.PendingWorkItemCount);
            Thread.Sleep(interval);
        }

        TimeSpan window = clock.Elapsed;
        Volatile.Write(ref closed, 1);
        int servedInWindow = Volatile.Read(ref served);

        // Let the run end before the next one starts: requests still queued are turned away, blocked ones finish their call.
        bool drained = Task.WaitAll([.. requests], DrainTimeout);
        return new PoolResult(style, window, requests.Count, servedInWindow, peakThreads, peakQueue, drained);

        async Task ServeAsync()
        {
            if (Volatile.Read(ref closed) != 0)
            {
                return; // arrived too late to be served in the window: the client has gone
            }

            await RequestHandler.HandleAsync(backend, style);
            if (Volatile.Read(ref closed) == 0)
            {
                Interlocked.Increment(ref served);
            }
        }
    }
}
