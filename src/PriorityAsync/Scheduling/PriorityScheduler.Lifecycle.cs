using System.Collections.Generic;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The lifecycle ([E-END]): what the end completes besides the queues.
public abstract partial class PriorityScheduler
{
    // [E-END], step 3: the work that started and waits (IPendingOperation), so that an end which drops its continuation completes
    // its task. Under _pendingLock, which is a leaf: no user code and no other lock under it.
    private readonly Lock _pendingLock = new();
    private HashSet<IPendingOperation>? _pending;
    private bool _pendingClosed;

    /// <summary>Work whose task the library handed out has started and now waits: tracked until it ends, or until the end completes
    /// its task ([E-END], step 3). After that sweep (an operation cannot start once its scheduler's threads have left) it is
    /// abandoned at once.</summary>
    internal void TrackPending(IPendingOperation operation)
    {
        lock (_pendingLock)
        {
            if (!_pendingClosed)
            {
                (_pending ??= new HashSet<IPendingOperation>(ReferenceEqualityComparer.Instance)).Add(operation);
                return;
            }
        }

        operation.AbandonAtEnd();
    }

    /// <summary>The work has ended by itself: no longer the end's to complete.</summary>
    internal void UntrackPending(IPendingOperation operation)
    {
        lock (_pendingLock)
        {
            _pending?.Remove(operation);
        }
    }

    /// <summary>[E-END], step 3: every operation still waiting gets its task completed (faulted with ObjectDisposedException) and its
    /// hold released. After a graceful end there is none (each held the scheduler open); after an end that dropped what was queued (a
    /// host's Dispose, a fault) a waiting operation's continuation was dropped, or will be when it comes, so nothing else would.</summary>
    private void AbandonPending()
    {
        IPendingOperation[] pending;
        lock (_pendingLock)
        {
            _pendingClosed = true;
            if (_pending is not { Count: > 0 } set)
            {
                return;
            }

            pending = [.. set];
            set.Clear();
        }

        // Outside the lock: a scope child's end cancels its siblings' token, whose callbacks are user code (caught by the scope).
        foreach (IPendingOperation operation in pending)
        {
            operation.AbandonAtEnd();
        }
    }
}
