using System;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// What the two <c>InvokeAsync</c> operations share, <see cref="InvokeOperation{TResult}"/> (a <see cref="PriorityContext"/>) and
/// <see cref="PoolInvokeOperation{TResult}"/> (a <see cref="PriorityThreadPool"/>): the scheduler and level they run at, and their
/// messages (dropped before it ran; the delegate returned no task). How each holds its scheduler open is the subclass's.
/// </summary>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal abstract class SchedulerInvokeOperation<TResult> : WorkOperation<TResult>, IInvokeOperation
{
    private readonly IPriorityScheduler _scheduler;
    private readonly int _level;

    protected SchedulerInvokeOperation(IPriorityScheduler scheduler, int level, Delegate work, bool hasResult)
        : base(work, hasResult)
    {
        _scheduler = scheduler;
        _level = level;
    }

    protected override string SchedulerName => _scheduler.Name;

    protected override int Level => _level;

    /// <summary>The scheduler finished before the operation could run: its task faults with <see cref="ObjectDisposedException"/>.</summary>
    public void Abandon() =>
        TrySetException(new ObjectDisposedException(
            _scheduler.Name,
            $"The {_scheduler.GetType().Name} '{_scheduler.Name}' finished ({_scheduler.State}) before the work passed to {Kind} at level {_level} could run; the work did not run."));

    protected override string NullTaskMessage() =>
        $"The delegate passed to {Kind} ({_scheduler.GetType().Name} '{_scheduler.Name}', level {_level}) returned null instead of a Task.";
}
