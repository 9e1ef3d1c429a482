using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace FrameLoop;

/// <summary>
/// The frame loop's time: what work costs (<see cref="Spend"/>), the wait for the next frame (<see cref="WaitUntil"/>) and events from
/// outside the main thread (<see cref="At"/>: input arriving, a disk read completing). It is also the <see cref="TimeProvider"/> the
/// PriorityAsync context measures its drain budget on. Two kinds: <see cref="RealClock"/> (the machine's time: work spins, events
/// come from a device thread) and <see cref="VirtualClock"/> (work advances the clock: the same run, figures exact at any load).
/// </summary>
internal abstract class SimClock : TimeProvider, IDisposable
{
    /// <summary>Gets the clock's reading now, in ticks of <see cref="TimeProvider.TimestampFrequency"/>.</summary>
    public long Now => GetTimestamp();

    /// <summary>Gets whether this is the virtual clock.</summary>
    public abstract bool IsVirtual { get; }

    /// <summary>A duration in ticks of this clock.</summary>
    public long Ticks(TimeSpan duration) => (long)(duration.Ticks * ((double)TimestampFrequency / TimeSpan.TicksPerSecond));

    /// <summary>A number of ticks of this clock as a duration.</summary>
    public TimeSpan Duration(long ticks) => TimeSpan.FromTicks((long)(ticks * ((double)TimeSpan.TicksPerSecond / TimestampFrequency)));

    /// <summary>The calling code works for <paramref name="duration"/> (an item's CPU time).</summary>
    public abstract void Spend(TimeSpan duration);

    /// <summary>The frame loop waits for its next frame.</summary>
    public abstract void WaitUntil(long timestamp);

    /// <summary>Runs <paramref name="action"/> once the clock reads <paramref name="timestamp"/>, off the frame loop's code: a device
    /// thread (real), or the main thread as the clock passes it (virtual).</summary>
    public abstract void At(long timestamp, Action action);

    public virtual void Dispose()
    {
    }
}

/// <summary>The machine's clock: work spins on the CPU for its duration, events fire on a device thread of their own.</summary>
internal sealed class RealClock : SimClock
{
    private readonly object _lock = new();
    private readonly PriorityQueue<Action, long> _events = new();
    private readonly Thread _device;
    private bool _stopped;

    public RealClock()
    {
        _device = new Thread(RunDevice) { IsBackground = true, Name = "FrameLoop devices" };
        _device.Start();
    }

    public override bool IsVirtual => false;

    public override long TimestampFrequency => Stopwatch.Frequency;

    public override long GetTimestamp() => Stopwatch.GetTimestamp();

    public override void Spend(TimeSpan duration)
    {
        long end = Stopwatch.GetTimestamp() + Ticks(duration);
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(20);
        }
    }

    public override void WaitUntil(long timestamp)
    {
        while (true)
        {
            long left = timestamp - Stopwatch.GetTimestamp();
            if (left <= 0)
            {
                return;
            }

            // Sleep while more than 2 ms is left (a sleep's resolution), then spin: frames start on time on a quiet machine.
            if (Duration(left) > TimeSpan.FromMilliseconds(2))
            {
                Thread.Sleep(1);
            }
            else
            {
                Thread.SpinWait(20);
            }
        }
    }

    public override void At(long timestamp, Action action)
    {
        lock (_lock)
        {
            _events.Enqueue(action, timestamp);
            Monitor.Pulse(_lock);
        }
    }

    public override void Dispose()
    {
        lock (_lock)
        {
            _stopped = true;
            Monitor.Pulse(_lock);
        }

        _device.Join();
        base.Dispose();
    }

    private void RunDevice()
    {
        while (true)
        {
            Action action;
            lock (_lock)
            {
                while (true)
                {
                    if (_stopped)
                    {
                        return;
                    }

                    if (_events.TryPeek(out _, out long due))
                    {
                        long left = due - Stopwatch.GetTimestamp();
                        if (left <= 0)
                        {
                            action = _events.Dequeue();
                            break;
                        }

                        Monitor.Wait(_lock, TimeSpan.FromTicks(Math.Max(1, Math.Min(Duration(left).Ticks, TimeSpan.TicksPerMillisecond))));
                    }
                    else
                    {
                        Monitor.Wait(_lock);
                    }
                }
            }

            action();
        }
    }
}

/// <summary>
/// Virtual time: the clock moves only when the main thread spends time or waits, by exactly that much, and events fire (on the main
/// thread) as the clock passes their time. So a run is the same on any machine at any load, and its figures are exact.
/// </summary>
internal sealed class VirtualClock : SimClock
{
    private readonly PriorityQueue<Action, (long Due, long Sequence)> _events = new();
    private long _now = TimeSpan.TicksPerSecond; // never 0
    private long _sequence;

    public override bool IsVirtual => true;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp() => _now;

    public override void Spend(TimeSpan duration) => AdvanceTo(_now + duration.Ticks);

    public override void WaitUntil(long timestamp) => AdvanceTo(timestamp);

    public override void At(long timestamp, Action action) => _events.Enqueue(action, (timestamp, _sequence++));

    /// <summary>Moves the clock to <paramref name="target"/>, firing each event due on the way at its own time, in time order.</summary>
    private void AdvanceTo(long target)
    {
        while (_events.TryPeek(out Action? action, out (long Due, long Sequence) key) && key.Due <= target)
        {
            _events.Dequeue();
            _now = Math.Max(_now, key.Due);
            action();
        }

        _now = Math.Max(_now, target);
    }
}
