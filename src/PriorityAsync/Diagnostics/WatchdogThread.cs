using System;
using System.Collections.Generic;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The process-wide thread that runs every scheduler thread's stall watchdog (<see cref="Watchdog"/>): one dedicated background thread, never
/// the thread pool, so a stall is reported on time when the pool is starved too (a sync-over-async <c>.Wait()</c> often starves both).
/// </summary>
/// <remarks>
/// <para>It sleeps until the earliest next check of its watchdogs (a quarter of each one's stall timeout: 2.5 s with the default
/// 10 s), checks the ones that are due, and raises their reports on itself. With no watchdog registered, or every watched thread
/// idle (parked: an idle thread is not stalled), it sleeps without a timeout until a thread leaves its park ([O-STALL]): an idle
/// process wakes it never.
/// Checks fall on a grid (whole multiples of the interval), so watchdogs of one timeout are checked together: a hundred loops wake the
/// thread as often as one. A check reads a few counters and takes the scheduler's timer lock to see whether a timer is overdue:
/// microseconds, a few hundred times an hour per watched thread ([O-STALL]). Each wake also re-reads the timing histograms' flags
/// ([O-SLOW]): a busy scheduler that never parks sees a listener within a check interval.</para>
/// <para>Handlers of <see cref="PriorityScheduler.StallDetected"/> run on this thread, one at a time: a slow handler delays the other
/// checks, never the schedulers. An exception thrown by a handler is unhandled and ends the process, as it would on a
/// thread-pool timer.</para>
/// <para>Registration and the checks share <see cref="_lock"/>; the checks themselves (and the handlers) run outside it. A watchdog
/// disposed while its check runs reports nothing (it sees its own stop flag or its scheduler finished).</para>
/// </remarks>
internal sealed class WatchdogThread
{
    private static WatchdogThread? s_shared;

    private readonly object _lock = new();
    private readonly List<Watchdog> _watchdogs = [];
    private readonly List<Watchdog> _due = [];
    private readonly AutoResetEvent _signal = new(false);
    private readonly WatchdogClock _clock;
    private Thread? _thread;
    private long _checks;
    private volatile bool _stopping;

    // [O-STALL]: 1 while the thread sleeps because every watched thread is idle; whoever clears a thread's parked flag clears it and
    // sets the signal (Awake).
    private int _dormant;

    /// <summary>For tests: a watchdog thread of their own, on a clock they move ([O-STALL]); its thread starts with the first
    /// watchdog registered, and ends at <see cref="Stop"/>.</summary>
    internal WatchdogThread(WatchdogClock clock) => _clock = clock;

    private WatchdogThread()
        : this(WatchdogClock.System)
    {
    }

    /// <summary>Gets the process-wide watchdog thread.</summary>
    public static WatchdogThread Shared => Volatile.Read(ref s_shared) ?? CreateShared();

    /// <summary>For tests and measurements: how many checks the thread has made.</summary>
    internal long Checks => Interlocked.Read(ref _checks);

    /// <summary>For tests: whether the thread sleeps because every watched thread is idle ([O-STALL]).</summary>
    internal bool IsDormant => Volatile.Read(ref _dormant) != 0;

    /// <summary>For measurements: the thread, once started.</summary>
    internal Thread? Thread => _thread;

    public void Register(Watchdog watchdog)
    {
        lock (_lock)
        {
            watchdog.NextCheck = NextOnGrid(_clock.Now, watchdog.IntervalTicks);
            watchdog.Home = this;
            watchdog.Watched.Watcher = this; // before the list: a thread that reads it as it leaves its park wakes this one ([O-STALL])
            _watchdogs.Add(watchdog);
            if (_thread is null)
            {
                // Not captured: the thread outlives whatever code first started a scheduler with a watchdog.
                string name = ReferenceEquals(_clock, WatchdogClock.System) ? "PriorityAsync stall watchdog" : "PriorityAsync stall watchdog (test clock)";
                _thread = new Thread(Run) { IsBackground = true, Name = name };
                _thread.UnsafeStart();
            }
        }

        _signal.Set(); // its first check may be earlier than the one the thread sleeps until
    }

    public void Unregister(Watchdog watchdog)
    {
        lock (_lock)
        {
            _watchdogs.Remove(watchdog);
        }
    }

    /// <summary>For tests: ends the thread of a watchdog thread of their own (never the shared one's).</summary>
    internal void Stop()
    {
        _stopping = true;
        _signal.Set();
    }

    /// <summary>
    /// [O-STALL]: <paramref name="thread"/> has just cleared its parked flag (or a producer cleared it for a host's loop), with a
    /// full fence: if the watchdog thread that watches it sleeps because every watched thread was idle, it wakes to watch again. Two
    /// field reads otherwise (none of the watchdog's when the thread has no watchdog).
    /// </summary>
    public static void Awake(SchedulerThread thread)
    {
        if (thread.Watcher is { } watcher && Volatile.Read(ref watcher._dormant) != 0 && Interlocked.Exchange(ref watcher._dormant, 0) != 0)
        {
            watcher._signal.Set();
        }
    }

    /// <summary>The first whole multiple of <paramref name="interval"/> after <paramref name="now"/>: every watchdog of one interval
    /// is checked at the same moments, so that many of them cost one wake-up.</summary>
    internal static long NextOnGrid(long now, long interval) => ((now / interval) + 1) * interval;

    private static WatchdogThread CreateShared()
    {
        Interlocked.CompareExchange(ref s_shared, new WatchdogThread(), null);
        return s_shared!;
    }

    /// <summary>[O-STALL]: whether every watched thread is idle, so the thread may sleep until one is not. The flag is raised with a
    /// full fence before the threads are looked at again, and a thread clears its parked flag with a full fence before it reads the
    /// flag (store-buffer pattern): either this look sees the thread awake, or the thread sees the flag and sets the signal.</summary>
    private bool SleepsWhileEveryThreadIsIdle()
    {
        if (!EveryThreadIdle())
        {
            return false;
        }

        Interlocked.Exchange(ref _dormant, 1);
        if (EveryThreadIdle())
        {
            return true;
        }

        Volatile.Write(ref _dormant, 0); // a thread woke meanwhile (its Awake, if it saw the flag, costs one early wake-up)
        return false;
    }

    private bool EveryThreadIdle()
    {
        lock (_lock)
        {
            foreach (Watchdog watchdog in _watchdogs)
            {
                if (!watchdog.IsIdle)
                {
                    return false;
                }
            }
        }

        return true;
    }

    private void Run()
    {
        while (!_stopping)
        {
            long now = _clock.Now;
            long next = long.MaxValue;
            lock (_lock)
            {
                foreach (Watchdog watchdog in _watchdogs)
                {
                    if (watchdog.NextCheck <= now)
                    {
                        _due.Add(watchdog);
                        watchdog.NextCheck = NextOnGrid(now, watchdog.IntervalTicks);
                    }

                    next = Math.Min(next, watchdog.NextCheck);
                }
            }

            // Outside the lock: a check may raise StallDetected, whose handler may start or end a loop (and so register here).
            foreach (Watchdog watchdog in _due)
            {
                watchdog.Tick(_clock.Now);
                Interlocked.Increment(ref _checks);
            }

            _due.Clear();
            if (next != long.MaxValue)
            {
                ContextRegistry.RefreshIfListenersChanged(); // a scheduler that never parks learns of a histogram listener here ([O-SLOW])
            }

            if (next == long.MaxValue || SleepsWhileEveryThreadIsIdle())
            {
                _clock.Wait(_signal, long.MaxValue); // until a watched thread leaves its park (Awake), or a watchdog registers
                Volatile.Write(ref _dormant, 0);
            }
            else
            {
                _clock.Wait(_signal, next);
            }
        }
    }
}
