using System;
using System.Runtime.ExceptionServices;
using PriorityAsync.Internal;

namespace PriorityAsync;

// A loop on a VirtualTimeProvider: when it has nothing to run it jumps the clock to its earliest armed timer instead of parking.
// The invariants (V1-V3) are in docs/design.md, "Virtual time".
public sealed partial class PriorityContext
{
    // The options' TimeProvider when it is a VirtualTimeProvider (this loop drives it), else null. Read only by Park.
    private readonly VirtualTimeProvider? _virtualClock;

    /// <summary>
    /// Park, on the loop thread, after the parking fence (_parked = 1) and the re-check found no queued item, no due timer and an
    /// outstanding operation: on a virtual clock, jump it to its earliest timer (V1) instead of waiting.
    /// </summary>
    /// <returns><see langword="true"/> if the clock moved or a timer fired (the loop goes round again: the firing raised the flag,
    /// or queued work); <see langword="false"/> to wait as usual (no virtual clock, a hold, or nothing armed).</returns>
    private bool TryAdvanceVirtualClock()
    {
        if (_virtualClock is null)
        {
            return false;
        }

        try
        {
            return _virtualClock.TryAdvanceIdle();
        }
        catch (Exception ex)
        {
            // A callback of a timer made on the clock itself threw on the loop thread: the context faults with it, as for a clock
            // that throws (T4): no handler may mark it handled, and the loop stops before its next item.
            ((ITimerHost)this).OnClockFailed(ExceptionDispatchInfo.Capture(ex));
            return true;
        }
    }

    /// <summary>
    /// The virtual clock, from any thread, after a timer of it was armed or changed or the last hold was released (V3): a loop parked
    /// with nothing to jump to looks again. A spurious wake costs one lap.
    /// </summary>
    internal void WakeForVirtualClock() => WakeIfParked();
}
