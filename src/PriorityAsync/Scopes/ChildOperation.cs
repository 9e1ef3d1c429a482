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

    public ChildOperation(TaskScope scope, WorkFlow flow, Delegate child, bool hasResult)
        : base(flow, child, hasResult)
    {
        _scope = scope;
        flow.Work = this;
    }

    /// <summary>The child's own flow, a child of its scope's owner ([X-PARENT]).</summary>
    public WorkFlow Flow => (WorkFlow)Task.AsyncState!;

    protected override string Kind => "TaskScope.Start";

    protected override PriorityScheduler Scheduler => _scope.Scheduler;

    protected override int Level => Flow.Level;

    public void Abandon()
    {
        TrySetException(new ObjectDisposedException(
            _scope.Scheduler.Name,
            $"{_scope.Scheduler.SubjectAtStart} finished ({_scope.Scheduler.State}) before the child started at level {Level} could run; the child did not run."));
        OnTaskCompleted();
        _scope.OnChildEnded(Task, Flow);
    }

    protected override Task? StartWork(Delegate work) =>
        HasResult
            ? ((Func<CancellationToken, Task<TResult>>)work)(_scope.CancellationToken)
            : ((Func<CancellationToken, Task>)work)(_scope.CancellationToken);

    protected override string NullTaskMessage() =>
        $"The child started in a TaskScope of {_scope.Scheduler.Subject} (level {Level}) returned null instead of a Task.";

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
        _scope.OnChildEnded(Task, Flow); // [K-SCOPE], then the hold is released
    }

    protected override void OnAbandonedAtEnd() => _scope.OnChildEnded(Task, Flow); // [K-SCOPE]: the scheduler ended the child
}
