using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One <see cref="PriorityThreadPool.InvokeAsync(Func{Task}, int)"/> call, or one root child of <see cref="Priority.Start(Func{CancellationToken, Task})"/>
/// on a pool: the pool's form of <see cref="InvokeOperation{TResult}"/> (the same <see cref="WorkOperation{TResult}"/> runs both).
/// </summary>
/// <remarks>Invariant: the returned task always completes: the operation is run by a pool thread, or dropped (<see cref="SchedulerInvokeOperation{TResult}.Abandon"/>).
/// While the work's task is pending it holds one outstanding operation, so <see cref="PriorityThreadPool.Complete"/> waits for it.</remarks>
internal sealed class PoolInvokeOperation<TResult> : SchedulerInvokeOperation<TResult>
{
    private readonly PriorityThreadPool _pool;
    private readonly bool _rootChild;

    public PoolInvokeOperation(PriorityThreadPool pool, int level, Delegate work, bool hasResult, bool rootChild = false)
        : base(pool, level, work, hasResult)
    {
        _pool = pool;
        _rootChild = rootChild;
    }

    protected override string Kind => _rootChild ? "Priority.Start" : "InvokeAsync";

    protected override Task? StartWork(Delegate work) =>
        _rootChild ? ((Func<CancellationToken, Task>)work)(_pool.RootCancellation) : base.StartWork(work);

    protected override void Hold() => _pool.OperationStarted();

    protected override void Release() => _pool.OperationCompleted();

    protected override void Finished(Delegate work, Task? workTask)
    {
        base.Finished(work, workTask);
        if (_rootChild)
        {
            _pool.OnRootChildEnded(Task); // records a failure (and cancels the other children); releases the child's hold
        }
    }
}
