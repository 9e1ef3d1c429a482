using System;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// The queued item of <c>InvokeAsync</c>: the work, the scheduler and level it runs at, and the hold it keeps on the scheduler until
/// the work's task completes (taken when it starts, on a thread of the running scheduler, which therefore cannot have finished).
/// </summary>
/// <typeparam name="TResult">The result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class InvokeOperation<TResult> : WorkOperation<TResult>, IInvokeOperation
{
    private readonly PriorityScheduler _scheduler;
    private readonly int _level;

    private readonly WorkFlow _flow;

    public InvokeOperation(WorkFlow flow, Delegate work, bool hasResult)
        : base(flow, work, hasResult)
    {
        _flow = flow;
        _scheduler = flow.Scheduler;
        _level = flow.OwnLevel;
        flow.Work = this;
    }

    /// <summary>Queues the work as the first item of its flow, in the caller's <see cref="System.Threading.ExecutionContext"/> ([E-FLOW]).</summary>
    public void Start() => _flow.QueueItem(new WorkItem(IInvokeOperation.RunCallback, this, ExecutionContextFlow.Capture()));

    protected override string Kind => "InvokeAsync";

    protected override PriorityScheduler Scheduler => _scheduler;

    protected override int Level => _level;

    /// <summary>The scheduler finished before the operation could run: its task faults with <see cref="ObjectDisposedException"/>.</summary>
    public void Abandon()
    {
        TrySetException(new ObjectDisposedException(
            _scheduler.Name,
            $"{_scheduler.SubjectAtStart} finished ({_scheduler.State}) before the work passed to {Kind} at level {_level} could run; the work did not run."));
        OnTaskCompleted();
    }

    protected override void Hold() => _scheduler.OperationStarted();

    protected override void Release() => _scheduler.OperationCompleted();

    protected override string NullTaskMessage() =>
        $"The delegate passed to {Kind} ({_scheduler.Subject}, level {_level}) returned null instead of a Task.";
}
