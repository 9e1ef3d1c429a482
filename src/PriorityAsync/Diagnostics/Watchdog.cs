using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// Detects a stalled loop: work waiting, and no item started for at least the stall timeout. Enabled by
/// <see cref="PriorityContextOptions.StallTimeout"/>; one per running loop.
/// </summary>
/// <remarks>
/// <para>Cost on the hot path: none. The loop already counts the items it starts (<c>_runPerLevel</c>, a plain increment on the loop
/// thread); the watchdog reads those counters, the queue counts and whether a loop timer is overdue every quarter of the timeout, on
/// the process-wide <see cref="WatchdogThread"/> (never the thread pool, so a starved pool does not delay a report). Post, Prioritize
/// and dispatch do nothing extra, whether the watchdog is on or off.</para>
/// <para>Waiting work is queued items, and also a loop timer or <c>Priority.Delay</c> whose due time has passed: a loop blocked in
/// <c>.Wait()</c> on such a delay never moves it into its queues, yet it is as stuck as one that does not run a queued item.</para>
/// <para>What a check decides (<see cref="Check"/>): if the dispatch count moved since the previous check, or no work is waiting, the loop
/// is healthy and the episode (if any) ends. Otherwise the first such check starts an episode; once the episode is
/// <c>timeout</c> old, it is reported once (event + metrics). Every item waiting at the episode's first check is still waiting (nothing
/// started since), so the episode's age is a lower bound of the age of the oldest waiting item; it lags the true stall by at most two
/// check intervals (half the timeout).</para>
/// <para>Reading the counters from another thread is safe: they are 64-bit, written by one thread, and read with acquire semantics; a
/// read that is one item behind only delays a report by one check.</para>
/// </remarks>
internal sealed class Watchdog : IDisposable
{
    private readonly IWatchdogTarget _context;
    private readonly TimeSpan _timeout;
    private readonly long _timeoutTicks;

    private long _lastDispatchCount = -1;
    private long _episodeStart; // Stopwatch timestamp of the episode's first check; 0 = no episode
    private bool _episodeReported;
    private volatile bool _stopped;

    private Watchdog(IWatchdogTarget context, TimeSpan timeout)
    {
        _context = context;
        _timeout = timeout;
        _timeoutTicks = (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        IntervalTicks = (long)(CheckInterval(timeout).TotalSeconds * Stopwatch.Frequency);
    }

    /// <summary>The stall timeout it watches for.</summary>
    public TimeSpan Timeout => _timeout;

    /// <summary>The period of the checks, in Stopwatch ticks.</summary>
    public long IntervalTicks { get; }

    /// <summary>Guarded by the <see cref="WatchdogThread"/>'s lock: when the next check is due (a Stopwatch timestamp).</summary>
    public long NextCheck { get; set; }

    /// <summary>A quarter of the timeout, at least 1 ms: the report comes between 1 and 1.5 timeouts after the loop stopped dispatching.</summary>
    public static TimeSpan CheckInterval(TimeSpan timeout) => TimeSpan.FromTicks(Math.Max(timeout.Ticks / 4, TimeSpan.TicksPerMillisecond));

    /// <summary>Starts the watchdog of a loop that has just started running.</summary>
    public static Watchdog Start(IWatchdogTarget context, TimeSpan timeout)
    {
        var watchdog = new Watchdog(context, timeout);
        WatchdogThread.Shared.Register(watchdog);
        return watchdog;
    }

    /// <summary>For tests: a watchdog that is not registered, driven by explicit <see cref="Check"/> calls with made-up clocks.</summary>
    internal static Watchdog CreateManual(IWatchdogTarget context, TimeSpan timeout) => new(context, timeout);

    public void Dispose()
    {
        _stopped = true; // a check already running sees it, or the finished state, and reports nothing
        WatchdogThread.Shared.Unregister(this);
    }

    /// <summary>
    /// One check. Returns the report to raise, or <see langword="null"/>. Pure apart from the episode fields, so tests can drive it with
    /// made-up timestamps, dispatch counts and pending counts.
    /// </summary>
    /// <param name="now">A <see cref="Stopwatch.GetTimestamp"/> value.</param>
    /// <param name="dispatchCount">The number of items the loop has started so far.</param>
    /// <param name="pendingPerLevel">The number of items waiting per level (index L is level L).</param>
    internal StallDetectedEventArgs? Check(long now, long dispatchCount, ReadOnlySpan<int> pendingPerLevel)
    {
        int highestPending = -1;
        int pendingTotal = 0;
        for (int level = pendingPerLevel.Length - 1; level >= 0; level--)
        {
            if (pendingPerLevel[level] > 0)
            {
                highestPending = highestPending < 0 ? level : highestPending;
                pendingTotal += pendingPerLevel[level];
            }
        }

        if (dispatchCount != _lastDispatchCount || highestPending < 0)
        {
            // Progress, or nothing to do (an idle loop is not stalled): no episode.
            _lastDispatchCount = dispatchCount;
            _episodeStart = 0;
            _episodeReported = false;
            return null;
        }

        if (_episodeStart == 0)
        {
            _episodeStart = now == 0 ? 1 : now;
            return null;
        }

        long age = now - _episodeStart;
        if (_episodeReported || age < _timeoutTicks)
        {
            return null;
        }

        _episodeReported = true; // once per episode; progress re-arms it
        return new StallDetectedEventArgs(
            highestPending,
            TimeSpan.FromSeconds((double)age / Stopwatch.Frequency),
            pendingTotal,
            _timeout);
    }

    /// <summary>One check, on the <see cref="WatchdogThread"/>: reads the loop's counters and raises a report if there is one.</summary>
    internal void Tick()
    {
        if (_stopped || _context.IsFinished)
        {
            return;
        }

        Span<int> pending = stackalloc int[_context.Levels];
        for (int level = 0; level < pending.Length; level++)
        {
            // Count, not the non-empty mask: I1 allows a stale set bit over an empty queue (for example the level of the item
            // running now), which would look like waiting work.
            pending[level] = _context.PendingCount(level);
        }

        if (_context.OverdueTimerLevel() is int timerLevel and >= 0)
        {
            pending[timerLevel]++; // an overdue timer is waiting work the blocked loop has not queued yet
        }

        StallDetectedEventArgs? report = Check(Stopwatch.GetTimestamp(), _context.DispatchCount, pending);
        if (report is not null && !_stopped)
        {
            _context.OnStallDetected(report);
        }
    }
}
