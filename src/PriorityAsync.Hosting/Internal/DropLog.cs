using System;
using System.Globalization;
using System.Text;
using System.Threading;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.Hosting.Internal;

/// <summary>
/// Counts dropped callbacks per level and logs them as rate-limited <c>WorkDropped</c> warnings: the first drop at once, the drops of
/// the following interval together when it ends (a one-shot timer), and what is left when the worker stops (<see cref="Flush"/>).
/// </summary>
/// <remarks>
/// Invariant: every drop is counted once and logged once. All state is guarded by <c>_gate</c>; the lock is on the drop path only,
/// which runs when a loop has finished or faulted, never on the post or dispatch path of a running loop.
/// </remarks>
internal sealed class DropLog : IDisposable
{
    private readonly object _gate = new();
    private readonly long[] _counts;
    private readonly ILogger _logger;
    private readonly string _worker;
    private readonly long _intervalMilliseconds;
    private readonly Timer _timer;
    private long _nextLogAt;
    private bool _timerArmed;
    private bool _disposed;

    public DropLog(ILogger logger, string worker, int levels, TimeSpan interval)
    {
        _logger = logger;
        _worker = worker;
        _counts = new long[levels];
        _intervalMilliseconds = (long)interval.TotalMilliseconds;
        _timer = new Timer(static state => ((DropLog)state!).OnTimer(), this, Timeout.Infinite, Timeout.Infinite);
    }

    /// <summary>Gets the number of drops counted so far, logged or not.</summary>
    public long Total { get; private set; }

    public void Record(int level)
    {
        lock (_gate)
        {
            _counts[level]++;
            Total++;
            long now = Environment.TickCount64;
            if (now >= _nextLogAt)
            {
                FlushLocked(now);
            }
            else if (!_timerArmed && !_disposed)
            {
                _timerArmed = true;
                _timer.Change(_nextLogAt - now, Timeout.Infinite);
            }
        }
    }

    /// <summary>Logs whatever is counted and not yet logged, whatever the interval.</summary>
    public void Flush()
    {
        lock (_gate)
        {
            FlushLocked(Environment.TickCount64);
        }
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _disposed = true;
            _timer.Dispose();
            FlushLocked(Environment.TickCount64);
        }
    }

    private void OnTimer()
    {
        lock (_gate)
        {
            _timerArmed = false;
            FlushLocked(Environment.TickCount64);
        }
    }

    private void FlushLocked(long now)
    {
        long total = 0;
        StringBuilder? perLevel = null;
        for (int level = _counts.Length - 1; level >= 0; level--)
        {
            long count = _counts[level];
            if (count == 0)
            {
                continue;
            }

            _counts[level] = 0;
            total += count;
            perLevel = perLevel is null ? new StringBuilder() : perLevel.Append(", ");
            perLevel.Append(CultureInfo.InvariantCulture, $"level {level}: {count}");
        }

        if (total == 0)
        {
            return;
        }

        _nextLogAt = now + _intervalMilliseconds;
        Log.WorkDropped(_logger, _worker, total, perLevel!.ToString());
    }
}
