using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One <see cref="PriorityThreadPool.InvokeAsync(Func{Task}, int)"/> call, or one root child of <see cref="Priority.Start(Func{CancellationToken, Task})"/>
/// on a pool: the pool's form of <see cref="InvokeOperation{TResult}"/> (the same <see cref="WorkOperation{TResult}"/> runs both).
/// </summary>
/// <remarks>Invariant: the returned task always completes: the operation is run by a pool thread, or dropped (<see cref="Abandon"/>).
/// While the work's task is pending it holds one outstanding operation, so <see cref="PriorityThreadPool.Complete"/> waits for it.</remarks>
internal sealed class PoolInvokeOperation<TResult> : WorkOperation<TResult>, IInvokeOperation
{
    private readonly PriorityThreadPool _pool;
    private readonly int _level;
    private readonly bool _rootChild;

    public PoolInvokeOperation(PriorityThreadPool pool, int level, Delegate work, bool hasResult, bool rootChild = false)
        : base(work, hasResult)
    {
        _pool = pool;
        _level = level;
        _rootChild = rootChild;
    }

    protected override string Kind => _rootChild ? "Priority.Start" : "InvokeAsync";

    protected override string SchedulerName => _pool.Name;

    protected override int Level => _level;

    public void Abandon() =>
        TrySetException(new ObjectDisposedException(
            _pool.Name,
            $"The PriorityThreadPool '{_pool.Name}' finished ({_pool.State}) before the work passed to {Kind} at level {_level} could run; the work did not run."));

    protected override Task? StartWork(Delegate work) =>
        _rootChild ? ((Func<CancellationToken, Task>)work)(_pool.RootCancellation) : base.StartWork(work);

    protected override string NullTaskMessage() =>
        $"The delegate passed to {Kind} (PriorityThreadPool '{_pool.Name}', level {_level}) returned null instead of a Task.";

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
