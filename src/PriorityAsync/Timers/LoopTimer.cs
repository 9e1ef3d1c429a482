using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The <see cref="ITimer"/> returned by a scheduler's <see cref="TimeProvider"/>: kept in the scheduler's timer heap, its callback
/// queued at <see cref="TimerEntry.Level"/> when due and run by the scheduler ([T-TIMER]: after <see cref="Change"/> or
/// <see cref="Dispose"/> returns no callback of an earlier arming starts; at most one firing is queued at a time).
/// </summary>
internal sealed class LoopTimer : TimerEntry, ITimer
{
    private static readonly ContextCallback s_runInContext = static state => ((LoopTimer)state!).InvokeCallback();

    private readonly TimerCallback _callback;
    private readonly object? _state;
    private readonly ExecutionContext? _executionContext;
    private bool _disposed;

    public LoopTimer(LoopTimers timers, int level, TimerCallback callback, object? state, FlowContext? route)
        : base(timers)
    {
        Level = level;
        Route = route;
        _callback = callback;
        _state = state;
        _executionContext = ExecutionContext.Capture(); // null when flow is suppressed, as for the system timers
    }

    /// <summary>The timer's callback, for naming a dropped firing.</summary>
    internal TimerCallback Callback => _callback;

    /// <summary>For tests: set once disposed.</summary>
    internal bool IsDisposed => _disposed;

    public bool Change(TimeSpan dueTime, TimeSpan period)
    {
        long due = LoopTimeProvider.ValidateAndConvert(dueTime, nameof(dueTime), Timers);
        long periodTicks = LoopTimeProvider.ValidateAndConvert(period, nameof(period), Timers);
        return Timers.ArmTimer(this, due, periodTicks, disposing: false);
    }

    public void Dispose() => Timers.ArmTimer(this, -1, -1, disposing: true);

    public ValueTask DisposeAsync()
    {
        Dispose();
        return default;
    }

    /// <summary>Under the timer lock: marks the timer disposed; returns false if it already was.</summary>
    internal bool TryMarkDisposed()
    {
        if (_disposed)
        {
            return false;
        }

        _disposed = true;
        return true;
    }

    protected override void RunFiring()
    {
        if (!Timers.TakeFiring(this))
        {
            return; // cancelled by Change or Dispose after it was queued ([T-TIMER])
        }

        if (_executionContext is null)
        {
            _callback(_state);
        }
        else
        {
            ExecutionContext.Run(_executionContext, s_runInContext, this);
        }
    }

    public override void OnDropped()
    {
        // Nothing to release: the callback simply never runs. WorkDropped reports it.
    }

    public override string ToString() => $"loop timer of {Host.Name} at level {Level}";

    private void InvokeCallback() => _callback(_state);
}
