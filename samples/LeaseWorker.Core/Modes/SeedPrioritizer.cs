using System;
using System.Threading.Tasks;

namespace LeaseWorker.Core;

/// <summary>
/// The seed article's <c>Prioritize</c>, faithfully: a desired priority and a Guid cookie shared by everything on the thread, and a
/// <c>Task.Yield()</c> loop. A continuation runs only once it has claimed the desired priority and come back round the FIFO queue
/// with nobody having outbid it; until then every waiting continuation keeps going round the queue. That is polling: it costs a
/// queue round trip per waiter per lap, and the waiters burn CPU while they wait.
/// </summary>
/// <remarks>Single-threaded by design, like the seed (its fields are plain fields). One instance per run.</remarks>
public sealed class SeedPrioritizer
{
    private int _desiredPriority = -1;
    private Guid _cookie;
    private long _laps;

    /// <summary>How many times a continuation went round the queue (<c>Task.Yield</c>) inside <see cref="Prioritize"/>.</summary>
    public long Laps => _laps;

    public async Task Prioritize(int priority)
    {
        var cookie = Guid.NewGuid();
        while (true)
        {
            if (_desiredPriority == priority && _cookie == cookie)
            {
                _desiredPriority = -1;
                _cookie = Guid.Empty;
                return;
            }
            else
            {
                if (_desiredPriority < priority)
                {
                    _desiredPriority = priority;
                    _cookie = cookie;
                    _laps++;
                    await Task.Yield();
                    continue;
                }
                else
                {
                    _laps++;
                    await Task.Yield();
                    continue;
                }
            }
        }
    }
}
