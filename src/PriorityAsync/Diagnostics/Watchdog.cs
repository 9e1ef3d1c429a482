using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// Detects a stalled scheduler thread: work waiting (queued items, or an overdue loop timer), and no item started on the thread for at
/// least the stall timeout ([O-STALL]). Enabled by <see cref="PrioritySchedulerOptions.StallTimeout"/>; one per
/// <see cref="SchedulerThread"/>, checked every quarter of the timeout on the <see cref="WatchdogThread"/>. It reads counters the thread
/// keeps anyway, so the hot path pays nothing for it.
/// </summary>
internal sealed class Watchdog : IDisposable
{
    private readonly SchedulerThread _context;
    private readonly TimeSpan _timeout;
    private readonly long _timeoutTicks;

    private long _lastDispatchCount = -1;

    // [O-RUNNING]: the check that first saw the thread's current dispatch count (a Stopwatch timestamp; 0: none yet), and that count.
    // Written by the checks, read by the inspector's sampler on its own thread: the item with that count started before that check.
    private long _seenAt;
    private long _seenCount = -1;
    private long _episodeStart; // Stopwatch timestamp of the episode's first check; 0 = no episode
    private bool _episodeReported;
    private volatile bool _stopped;

    private Watchdog(SchedulerThread context, TimeSpan timeout)
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

    /// <summary>Any thread: whether the watched thread is idle (parked), or the watchdog has nothing left to watch; such a thread
    /// cannot stall until it leaves its park ([O-STALL]).</summary>
    public bool IsIdle => _stopped || Volatile.Read(ref _context.Parked) != 0 || _context.Scheduler.IsFinished;

    /// <summary>The scheduler thread it watches.</summary>
    public SchedulerThread Watched => _context;

    /// <summary>The watchdog thread it was registered with (the shared one, or a test's), or null: it unregisters from there.</summary>
    public WatchdogThread? Home { get; set; }

    /// <summary>Guarded by the <see cref="WatchdogThread"/>'s lock: when the next check is due (a Stopwatch timestamp).</summary>
    public long NextCheck { get; set; }

    /// <summary>A quarter of the timeout, at least 1 ms: the report comes between 1 and 1.5 timeouts after the thread stopped dispatching.</summary>
    public static TimeSpan CheckInterval(TimeSpan timeout) => TimeSpan.FromTicks(Math.Max(timeout.Ticks / 4, TimeSpan.TicksPerMillisecond));

    /// <summary>Starts the watchdog of a scheduler thread whose scheduler has just started running.</summary>
    public static Watchdog Start(SchedulerThread context, TimeSpan timeout)
    {
        var watchdog = new Watchdog(context, timeout);
        WatchdogThread.Shared.Register(watchdog);
        return watchdog;
    }

    /// <summary>For tests: a watchdog that is not registered, driven by explicit <see cref="Check"/> calls with made-up clocks.</summary>
    internal static Watchdog CreateManual(SchedulerThread context, TimeSpan timeout) => new(context, timeout);

    public void Dispose()
    {
        _stopped = true; // a check already running sees it, or the finished state, and reports nothing
        Home?.Unregister(this);
    }

    /// <summary>
    /// One check. Returns the report to raise, or <see langword="null"/>. Pure apart from the episode fields, so tests can drive it with
    /// made-up timestamps, dispatch counts and pending counts.
    /// </summary>
    /// <param name="now">A <see cref="Stopwatch.GetTimestamp"/> value.</param>
    /// <param name="dispatchCount">The number of items the thread has started so far.</param>
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

        if (dispatchCount != Volatile.Read(ref _seenCount))
        {
            // The time first, then the count: a reader that sees this count sees this time or a later one (a lower bound still).
            Volatile.Write(ref _seenAt, now == 0 ? 1 : now);
            Volatile.Write(ref _seenCount, dispatchCount);
        }

        if (dispatchCount != _lastDispatchCount || highestPending < 0)
        {
            // Progress, or nothing to do (an idle thread is not stalled): no episode.
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

    /// <summary>Any thread ([O-RUNNING]): the Stopwatch timestamp of the first check that saw the thread at dispatch count
    /// <paramref name="dispatchCount"/>, or 0 when no check has seen it there. The item with that count started before it.</summary>
    public long SeenAt(long dispatchCount)
    {
        if (Volatile.Read(ref _seenCount) != dispatchCount)
        {
            return 0;
        }

        long at = Volatile.Read(ref _seenAt);
        return Volatile.Read(ref _seenCount) == dispatchCount ? at : 0;
    }

    /// <summary>Any thread: the Stopwatch timestamp of the first check of the stall it has reported and that still lasts (the thread
    /// has started no item since, and work still waited at the last check), or 0. The inspector shows a stall that began before it
    /// attached from it ([O-RUNNING]).</summary>
    public long StalledSince() => Volatile.Read(ref _episodeReported) ? Volatile.Read(ref _episodeStart) : 0;

    /// <summary>One check, on the <see cref="WatchdogThread"/> at <paramref name="now"/> (its clock's): reads the thread's counters and
    /// raises a report if there is one.</summary>
    internal void Tick(long now)
    {
        if (_stopped || _context.Scheduler.IsFinished)
        {
            return;
        }

        Span<int> pending = stackalloc int[_context.Scheduler.Levels];
        for (int level = 0; level < pending.Length; level++)
        {
            // Count, not the mask: a stale bit ([Q-MASK]) would look like waiting work.
            pending[level] = _context.PendingCount(level);
        }

        if (_context.OverdueTimerLevel() is int timerLevel and >= 0)
        {
            pending[timerLevel]++; // an overdue timer is waiting work the blocked thread has not queued yet
        }

        StallDetectedEventArgs? report = Check(now, _context.DispatchCount, pending);
        if (report is not null && !_stopped)
        {
            _context.Scheduler.OnStallDetected(_context, report);
        }
    }
}
