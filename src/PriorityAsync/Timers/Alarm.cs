using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>Something the <see cref="Alarm"/> can ring: typically "raise this flag and wake a parked thread".</summary>
internal interface IAlarmTarget
{
    /// <summary>Called on the alarm thread, under the alarm's lock, once the registered timestamp has passed. Must be short, must not
    /// block and must not throw: set a flag, signal an event.</summary>
    void OnAlarm();
}

/// <summary>One target's place in the <see cref="Alarm"/>: at most one pending ring per registration.</summary>
internal sealed class AlarmRegistration(IAlarmTarget target)
{
    public IAlarmTarget Target { get; } = target;

    /// <summary>Guarded by the alarm's lock: the timestamp to ring at, and the index in the alarm's list (-1: not registered).</summary>
    internal long Due;

    internal int Index = -1;
}

/// <summary>
/// A process-wide "ring this target at Stopwatch timestamp T" service, served by one dedicated background thread (never the thread
/// pool, so a starved pool cannot delay it): a scheduler registers the due time of its earliest loop timer, and the ring raises its
/// timers' flag ([T-ALARM]).
/// </summary>
/// <remarks>A registration with <see cref="AlarmRegistration.Index"/> &gt;= 0 is rung exactly once, no earlier than its
/// <see cref="AlarmRegistration.Due"/>, unless moved or removed first; ringing removes it. <see cref="IAlarmTarget.OnAlarm"/> runs
/// under the alarm's lock and takes no timer lock (the lock order is the timer lock, then the alarm's).</remarks>
internal sealed class Alarm
{
    private static Alarm? s_shared;

    private readonly object _lock = new();
    private readonly List<AlarmRegistration> _registrations = [];
    private Thread? _thread;
    private long _wakeUps;

    // The due time the thread sleeps until (long.MaxValue: no timeout), under the lock. A registration due later needs no pulse:
    // the thread wakes before it anyway and then recomputes. So re-arming a timer to a later time never wakes the alarm thread.
    private long _sleepingUntil = long.MaxValue;

    /// <summary>Gets the process-wide alarm.</summary>
    public static Alarm Shared => Volatile.Read(ref s_shared) ?? CreateShared();

    /// <summary>For tests and diagnostics: how many times the alarm thread woke up.</summary>
    internal long WakeUps => Interlocked.Read(ref _wakeUps);

    /// <summary>Rings <paramref name="registration"/> once <paramref name="dueTimestamp"/> has passed (replacing an earlier setting).</summary>
    public void Set(AlarmRegistration registration, long dueTimestamp)
    {
        lock (_lock)
        {
            if (registration.Index >= 0)
            {
                if (registration.Due == dueTimestamp)
                {
                    return;
                }
            }
            else
            {
                registration.Index = _registrations.Count;
                _registrations.Add(registration);
            }

            registration.Due = dueTimestamp;
            EnsureThread();
            if (dueTimestamp < _sleepingUntil)
            {
                Monitor.Pulse(_lock); // due before the thread would wake: let it recompute its sleep
            }
        }
    }

    /// <summary>Cancels the ring of <paramref name="registration"/>, if any.</summary>
    public void Clear(AlarmRegistration registration)
    {
        lock (_lock)
        {
            RemoveLocked(registration);
        }
    }

    private static Alarm CreateShared()
    {
        Interlocked.CompareExchange(ref s_shared, new Alarm(), null);
        return s_shared!;
    }

    private void RemoveLocked(AlarmRegistration registration)
    {
        int index = registration.Index;
        if (index < 0)
        {
            return;
        }

        int last = _registrations.Count - 1;
        AlarmRegistration moved = _registrations[last];
        _registrations[index] = moved;
        moved.Index = index;
        _registrations.RemoveAt(last);
        registration.Index = -1;
    }

    private void EnsureThread()
    {
        if (_thread is null)
        {
            // Not captured: the alarm outlives whatever code first armed a timer.
            using (ExecutionContext.SuppressFlow())
            {
                _thread = new Thread(Run) { IsBackground = true, Name = "PriorityAsync alarm" };
                _thread.Start();
            }
        }
    }

    private void Run()
    {
        lock (_lock)
        {
            while (true)
            {
                long now = Stopwatch.GetTimestamp();
                long earliest = long.MaxValue;
                for (int i = _registrations.Count - 1; i >= 0; i--)
                {
                    AlarmRegistration registration = _registrations[i];
                    if (registration.Due <= now)
                    {
                        RemoveLocked(registration); // swaps the last one into i; we walk downwards, so it was already looked at
                        registration.Target.OnAlarm();
                    }
                    else if (registration.Due < earliest)
                    {
                        earliest = registration.Due;
                    }
                }

                // Woken early (a pulse, or a spurious wake-up) or late, the loop above recomputes: rounding never loses a ring.
                _sleepingUntil = earliest;
                if (earliest == long.MaxValue)
                {
                    Monitor.Wait(_lock);
                }
                else
                {
                    Monitor.Wait(_lock, ToWaitMilliseconds(earliest - now));
                }

                _sleepingUntil = long.MinValue; // awake: no Set needs to pulse until it sleeps again

                _wakeUps++;
            }
        }
    }

    /// <summary>Rounds up, so the thread never wakes before the due time because of rounding (an early wake-up only costs a lap).</summary>
    private static int ToWaitMilliseconds(long stopwatchTicks)
    {
        double ms = Math.Ceiling(stopwatchTicks * 1000.0 / Stopwatch.Frequency);
        return ms >= int.MaxValue ? int.MaxValue - 1 : Math.Max(1, (int)ms);
    }
}
