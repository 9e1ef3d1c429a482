using System.Diagnostics;
using PriorityAsync.Internal;

namespace PriorityAsync.Tests.Infrastructure;

/// <summary>
/// A test clock for a <see cref="WatchdogThread"/> of the test's own: the thread's waits end when the test moves the clock past
/// their deadline (or when the thread's event is set, as by a watched thread leaving its park). <see cref="Advance"/> returns only
/// once the thread is waiting again, its checks and their reports done, so "nothing happened" is read on a clock that has passed
/// the watchdog's period, with the thread provably asleep, not after a real wait it may not have used ([O-STALL]).
/// </summary>
internal sealed class ManualWatchdogClock : WatchdogClock
{
    private const long NotWaiting = -1;

    private readonly object _gate = new();
    private readonly AutoResetEvent _moved = new(false);
    private long _now = 1_000 * Stopwatch.Frequency;
    private long _deadline = NotWaiting; // guarded by _gate: the deadline of the wait the thread is in
    private long _waits; // guarded by _gate: the waits it has begun

    public override long Now => Interlocked.Read(ref _now);

    /// <summary>Whether the thread sleeps without a deadline (every thread it watches idle, or nothing to watch).</summary>
    public bool IsAsleepWithoutDeadline
    {
        get
        {
            lock (_gate)
            {
                return _deadline == long.MaxValue;
            }
        }
    }

    public override void Wait(AutoResetEvent signal, long deadline)
    {
        lock (_gate)
        {
            _deadline = deadline;
            _waits++;
            Monitor.PulseAll(_gate);
        }

        try
        {
            WaitHandle[] handles = [signal, _moved];
            while (Now < deadline && WaitHandle.WaitAny(handles) != 0)
            {
                // the clock moved: past the deadline, or not yet
            }
        }
        finally
        {
            lock (_gate)
            {
                _deadline = NotWaiting;
                Monitor.PulseAll(_gate);
            }
        }
    }

    /// <summary>Moves the clock on by <paramref name="by"/> once the thread waits; if that ends its wait, returns once it waits
    /// again (its checks made, their reports raised).</summary>
    public void Advance(TimeSpan by)
    {
        lock (_gate)
        {
            WaitFor(() => _deadline != NotWaiting, "the watchdog thread to wait");
            long waits = _waits;
            Interlocked.Add(ref _now, (long)(by.TotalSeconds * Stopwatch.Frequency));
            bool ends = _deadline <= Now;
            _moved.Set();
            if (ends)
            {
                WaitFor(() => _waits > waits && _deadline != NotWaiting, "the watchdog thread to check and wait again");
            }
        }
    }

    /// <summary>Waits (bounded) until the thread sleeps without a deadline.</summary>
    public void WaitUntilAsleepWithoutDeadline(string because)
    {
        lock (_gate)
        {
            WaitFor(() => _deadline == long.MaxValue, "the watchdog thread to sleep without a deadline: " + because);
        }
    }

    /// <summary>Waits (bounded) until the thread waits with a deadline: it watches a thread that is not idle.</summary>
    public void WaitUntilWatching(string because)
    {
        lock (_gate)
        {
            WaitFor(() => _deadline != NotWaiting && _deadline != long.MaxValue, "the watchdog thread to wait for its next check: " + because);
        }
    }

    private void WaitFor(Func<bool> condition, string what)
    {
        long end = Stopwatch.GetTimestamp() + (long)(TestTimeout.Unexpected.TotalSeconds * Stopwatch.Frequency);
        while (!condition())
        {
            long left = end - Stopwatch.GetTimestamp();
            if (left <= 0)
            {
                throw new TimeoutException($"Timed out after {TestTimeout.Unexpected.TotalSeconds} s waiting for: {what}.");
            }

            Monitor.Wait(_gate, TimeSpan.FromSeconds((double)left / Stopwatch.Frequency));
        }
    }
}
