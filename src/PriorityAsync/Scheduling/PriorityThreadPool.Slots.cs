using System;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

// Concurrency caps per level ([K-SLOTS]): a slot of a level is held by each running item of it, and borrowed by nested runs (an
// inlined task, an inline Send) for their run. Locked mode only; the slots are counted under the dispatch lock.
public sealed partial class PriorityThreadPool
{
    private readonly int[] _running; // slots in use per level, under _dispatchLock
    private readonly int[] _maxConcurrency;
    private readonly bool _capped;
    private long _saturated; // bit L: level L at its cap; written under _dispatchLock, read anywhere

    /// <summary>Gets the most threads <paramref name="level"/> may use at once.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>.</param>
    /// <returns>From 1 to <see cref="ThreadCount"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the pool's levels.</exception>
    public int GetMaxConcurrency(int level) => _maxConcurrency[ValidateLevel(level)];

    internal override int GetMaxConcurrencyCore(int level) => _maxConcurrency[level];

    /// <summary>A task inlined on a pool thread: only when nothing this thread may run waits above <paramref name="level"/> and, with
    /// caps, the level has room for the task's run (a nested run); the item it is nested in keeps its slot.</summary>
    internal override bool TryRunTaskInline(int level, Func<Task, bool> tryExecuteTask, Task task)
    {
        int runLevel = WaitedLevel(level); // [X-WAIT]
        if (!MayGoOnAt(runLevel, out SchedulerThread? worker))
        {
            return false;
        }

        if (!_capped)
        {
            return InlineAt.RunTask(_syncContexts[level], tryExecuteTask, task);
        }

        if (!TryEnterNested(worker, runLevel, shareWhenFull: false, out NestedSlot outer))
        {
            return false;
        }

        try
        {
            return InlineAt.RunTask(_syncContexts[level], tryExecuteTask, task);
        }
        finally
        {
            ExitNested(worker, outer);
        }
    }

    /// <summary>[S-INLINE]: on a pool thread, run inline (queueing and waiting could deadlock a pool whose threads all wait), at the
    /// target level, as a nested run: on a slot borrowed at the level if it has room, else on the caller's.</summary>
    private protected override bool TrySendInline(PrioritySynchronizationContext target, SendOrPostCallback callback, object? state)
    {
        if (SchedulerThread.Current is not { } worker || worker.Scheduler != this)
        {
            return false;
        }

        if (!_capped)
        {
            InlineAt.Run(target, callback, state);
            return true;
        }

        TryEnterNested(worker, target.EffectiveLevel, shareWhenFull: true, out NestedSlot outer);
        try
        {
            InlineAt.Run(target, callback, state);
        }
        finally
        {
            ExitNested(worker, outer);
        }

        return true;
    }

    /// <summary>An inline Prioritize that changes level moves the running code's slot, if the new level has room; code nested on its
    /// outer code's slot takes one of its own instead, which its nested run's end gives back. A slot freed at a level that was at its
    /// cap makes that level's queued items runnable while this code goes on: [P-WORK] applies.</summary>
    private bool TryMoveAccountedLevel(SchedulerThread worker, int level)
    {
        bool freed;
        lock (_dispatchLock)
        {
            if (_running[level] >= _maxConcurrency[level])
            {
                return false;
            }

            freed = !worker.OnOuterSlot && ReleaseSlotLocked(worker.AccountedLevel);
            TakeSlotLocked(level);
            worker.AccountedLevel = level;
            worker.OnOuterSlot = false;
        }

        if (freed)
        {
            WakeForFreedSlot();
        }

        return true;
    }

    /// <summary>What a nested run saved of the accounting of the code it is nested in, given back at its end.</summary>
    private readonly record struct NestedSlot(int Level, bool OnOuterSlot);

    /// <summary>Code nested in the running code starts at <paramref name="level"/>. At the running code's own level it shares that slot
    /// (a Wait on a task of the caller's level must not need a second slot of a level capped at 1); else it borrows one if the level
    /// has room, or, with <paramref name="shareWhenFull"/> (an inline Send), runs on the running code's slot all the same. False: no
    /// room, nothing changed.</summary>
    private bool TryEnterNested(SchedulerThread worker, int level, bool shareWhenFull, out NestedSlot outer)
    {
        outer = new NestedSlot(worker.AccountedLevel, worker.OnOuterSlot);
        if (worker.AccountedLevel != level)
        {
            lock (_dispatchLock)
            {
                if (_running[level] < _maxConcurrency[level])
                {
                    TakeSlotLocked(level);
                    worker.AccountedLevel = level;
                    worker.OnOuterSlot = false;
                    return true;
                }
            }

            if (!shareWhenFull)
            {
                return false;
            }
        }

        worker.OnOuterSlot = true;
        return true;
    }

    /// <summary>The nested run ends: the slot it holds of its own is given back (with [P-WORK] if that frees a level at its cap), and
    /// the outer code's accounting is restored.</summary>
    private void ExitNested(SchedulerThread worker, NestedSlot outer)
    {
        bool freed = false;
        if (!worker.OnOuterSlot)
        {
            lock (_dispatchLock)
            {
                freed = ReleaseSlotLocked(worker.AccountedLevel);
            }
        }

        worker.AccountedLevel = outer.Level;
        worker.OnOuterSlot = outer.OnOuterSlot;
        if (freed)
        {
            WakeForFreedSlot();
        }
    }

    /// <summary>Under the dispatch lock: one more slot of <paramref name="level"/> in use.</summary>
    private void TakeSlotLocked(int level)
    {
        if (++_running[level] >= _maxConcurrency[level])
        {
            _saturated |= 1L << level;
        }
    }

    /// <summary>Under the dispatch lock: one slot of <paramref name="level"/> is given back. True if that took the level off its cap.
    /// The bit is cleared with an interlocked And, a full fence: the caller reads _idleCount afterwards ([P-WORK]) while a parking
    /// thread publishes itself, fences and re-reads _saturated ([P-POOL]); the lock's release alone would not order the two.</summary>
    private bool ReleaseSlotLocked(int level)
    {
        if (--_running[level] < _maxConcurrency[level] && (_saturated & (1L << level)) != 0)
        {
            Interlocked.And(ref _saturated, ~(1L << level));
            return true;
        }

        return false;
    }

    /// <summary>[P-WORK] after a slot was freed while code goes on running.</summary>
    private void WakeForFreedSlot()
    {
        if (_idleCount != 0 && Volatile.Read(ref _spinning) == 0 && HasRunnableWorkAbove(-1))
        {
            WakeOne();
        }
    }
}
