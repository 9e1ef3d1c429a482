using System;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// What a thread blocked in a cross-thread <c>Send</c> waits on. One per sending thread, reused: a thread blocked in
/// Send cannot start a second Send, so a thread-static instance is enough and Send allocates nothing in steady state.
/// </summary>
internal sealed class SendWaiter
{
    [ThreadStatic]
    private static SendWaiter? t_cached;

    /// <summary>The queued callback; recognisable by reference, so a dropped Send can release its waiter.</summary>
    public static readonly SendOrPostCallback RunCallback = static state => ((SendWaiter)state!).Run();

    private readonly ManualResetEventSlim _done = new(false, spinCount: 0);
    private SendOrPostCallback? _callback;
    private object? _state;
    private ExceptionDispatchInfo? _exception;
    private bool _abandoned;

    public static SendWaiter Rent(SendOrPostCallback callback, object? state)
    {
        SendWaiter waiter = t_cached ?? new SendWaiter();
        t_cached = null; // a re-entrant Send from a WorkDropped handler on this thread gets its own waiter
        waiter._callback = callback;
        waiter._state = state;
        waiter._exception = null;
        waiter._abandoned = false;
        waiter._done.Reset();
        return waiter;
    }

    /// <summary>The callback being sent, for naming it in a trace (on the scheduler's thread, while the item runs).</summary>
    public SendOrPostCallback? Callback => _callback;

    /// <summary>The state of <see cref="Callback"/>.</summary>
    public object? State => _state;

    /// <summary>Runs on a thread of the scheduler. Exceptions go back to the sender, so they never count as unhandled.</summary>
    private void Run()
    {
        try
        {
            _callback!(_state);
        }
        catch (Exception ex)
        {
            _exception = ExceptionDispatchInfo.Capture(ex);
        }
        finally
        {
            _done.Set();
        }
    }

    /// <summary>The scheduler finished before the item ran ([D-DROP]): the sender gets <see cref="ObjectDisposedException"/>.</summary>
    public void Abandon()
    {
        _abandoned = true;
        _done.Set();
    }

    /// <summary>Blocks the sending thread until the item ran or was abandoned, then returns the waiter to the cache.</summary>
    public void WaitAndRethrow(PriorityScheduler scheduler)
    {
        _done.Wait();
        ExceptionDispatchInfo? exception = _exception;
        bool abandoned = _abandoned;
        _callback = null;
        _state = null;
        _exception = null;
        t_cached = this;
        if (abandoned)
        {
            throw new ObjectDisposedException(scheduler.Name, $"{scheduler.SubjectAtStart} finished before the sent callback could run; it did not run.");
        }

        exception?.Throw();
    }
}
