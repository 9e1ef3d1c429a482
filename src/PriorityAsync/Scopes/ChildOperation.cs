using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One child of a <see cref="TaskScope"/>: queued at its level as an ordinary item (the <see cref="IInvokeOperation"/> callback, so the
/// scheduler's drop path completes it), run on the scheduler with the scope's token, its task handed back unwrapped.
/// </summary>
/// <remarks>The scope took the child's hold on the scheduler when it started it ([K-SCOPE]); the child's end, in every path
/// (ran and completed, threw, returned null, dropped), goes to <see cref="TaskScope.OnChildEnded"/> exactly once, which releases it.</remarks>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class ChildOperation<TResult> : WorkOperation<TResult>, IInvokeOperation
{
    private readonly TaskScope _scope;
    private readonly int _level;
    private readonly bool _hasResult;

    public ChildOperation(TaskScope scope, int level, Delegate child, bool hasResult)
        : base(child, hasResult)
    {
        _scope = scope;
        _level = level;
        _hasResult = hasResult;
    }

    public int ChildLevel => _level;

    protected override string Kind => "TaskScope.Start";

    protected override PriorityScheduler Scheduler => _scope.Scheduler;

    protected override int Level => _level;

    public void Abandon()
    {
        TrySetException(new ObjectDisposedException(
            _scope.Scheduler.Name,
            $"{_scope.Scheduler.SubjectAtStart} finished ({_scope.Scheduler.State}) before the child started at level {_level} could run; the child did not run."));
        _scope.OnChildEnded(Task);
    }

    protected override Task? StartWork(Delegate work) =>
        _hasResult
            ? ((Func<CancellationToken, Task<TResult>>)work)(_scope.CancellationToken)
            : ((Func<CancellationToken, Task>)work)(_scope.CancellationToken);

    protected override string NullTaskMessage() =>
        $"The child started in a TaskScope of {_scope.Scheduler.Subject} (level {_level}) returned null instead of a Task.";

    // The hold was taken by TaskScope.Start, for the queued item and the pending task alike ([K-SCOPE]).
    protected override void Hold()
    {
    }

    protected override void Release()
    {
    }

    protected override void Finished(Delegate work, Task? workTask)
    {
        base.Finished(work, workTask); // the fault report
        _scope.OnChildEnded(Task); // [K-SCOPE], then the hold is released
    }

    protected override void OnAbandonedAtEnd() => _scope.OnChildEnded(Task); // [K-SCOPE]: the scheduler ended the child
}
