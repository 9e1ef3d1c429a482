using System;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The time of a <see cref="WatchdogThread"/>: Stopwatch timestamps, and a wait on its event that ends at a deadline. The shared
/// thread uses <see cref="System"/>; a test gives a thread of its own a clock it moves by hand, so that what the watchdog does (and
/// does not do) over hours of idleness is seen at once, on a clock that has provably passed its period ([O-STALL]).
/// </summary>
internal class WatchdogClock
{
    /// <summary>Stopwatch time: the clock of <see cref="WatchdogThread.Shared"/>.</summary>
    public static readonly WatchdogClock System = new();

    /// <summary>Now, in Stopwatch ticks.</summary>
    public virtual long Now => Stopwatch.GetTimestamp();

    /// <summary>Waits until <paramref name="signal"/> is set or the clock reaches <paramref name="deadline"/>
    /// (<see cref="long.MaxValue"/>: no deadline).</summary>
    public virtual void Wait(AutoResetEvent signal, long deadline)
    {
        if (deadline == long.MaxValue)
        {
            signal.WaitOne();
            return;
        }

        long waitTicks = deadline - Now;
        if (waitTicks > 0)
        {
            // Rounded up to whole milliseconds (the wait's resolution): rounded down, the last fraction of a millisecond before a
            // check would be a zero wait, and the thread would spin through it (measured: ~1 ms of CPU per check).
            signal.WaitOne((int)Math.Min(int.MaxValue, (waitTicks * 1000 + Stopwatch.Frequency - 1) / Stopwatch.Frequency));
        }
    }
}
