using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Baselines;

/// <summary>
/// A single-threaded FIFO async context with the design and cost profile of Nito.AsyncEx's <c>AsyncContext</c> (see README.md:
/// the registry copy holds no Nito.AsyncEx package). Used only as a baseline.
/// </summary>
public sealed class AsyncContextReplica : IDisposable
{
    private readonly BlockingCollection<(Task Task, bool PropagateExceptions)> _queue = new();
    private readonly ReplicaSynchronizationContext _synchronizationContext;
    private readonly ReplicaTaskScheduler _taskScheduler;
    private readonly TaskFactory _taskFactory;
    private int _outstandingOperations;

    public AsyncContextReplica()
    {
        _synchronizationContext = new ReplicaSynchronizationContext(this);
        _taskScheduler = new ReplicaTaskScheduler(this);
        _taskFactory = new TaskFactory(CancellationToken.None, TaskCreationOptions.HideScheduler, TaskContinuationOptions.HideScheduler, _taskScheduler);
    }

    /// <summary>The context of the thread, or null.</summary>
    public static AsyncContextReplica? Current => (SynchronizationContext.Current as ReplicaSynchronizationContext)?.Context;

    public SynchronizationContext SynchronizationContext => _synchronizationContext;

    public TaskScheduler Scheduler => _taskScheduler;

    public TaskFactory Factory => _taskFactory;

    public static void Run(Func<Task> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        using var context = new AsyncContextReplica();
        context.OperationStarted();
        Task task = context._taskFactory.StartNew(action, CancellationToken.None, TaskCreationOptions.DenyChildAttach, context._taskScheduler).Unwrap()
            .ContinueWith(
                t =>
                {
                    context.OperationCompleted();
                    t.GetAwaiter().GetResult();
                },
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                context._taskScheduler);
        context.Execute();
        task.GetAwaiter().GetResult();
    }

    public static T Run<T>(Func<Task<T>> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        T result = default!;
        Run(async () => result = await action());
        return result;
    }

    /// <summary>Runs queued tasks until the outstanding operation count reaches zero.</summary>
    public void Execute()
    {
        SynchronizationContext? previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(_synchronizationContext);
        try
        {
            foreach ((Task task, bool propagate) in _queue.GetConsumingEnumerable())
            {
                _taskScheduler.DoTryExecuteTask(task);
                if (propagate)
                {
                    task.GetAwaiter().GetResult();
                }
            }
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    public void Dispose() => _queue.Dispose();

    internal void OperationStarted() => Interlocked.Increment(ref _outstandingOperations);

    internal void OperationCompleted()
    {
        if (Interlocked.Decrement(ref _outstandingOperations) == 0)
        {
            _queue.CompleteAdding();
        }
    }

    private void Enqueue(Task task, bool propagateExceptions)
    {
        OperationStarted();
        task.ContinueWith(_ => OperationCompleted(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, _taskScheduler);
        try
        {
            _queue.TryAdd((task, propagateExceptions));
        }
        catch (InvalidOperationException)
        {
            // Added after CompleteAdding: dropped silently, as the original does.
        }
    }

    private Task RunOnContext(Action action) =>
        _taskFactory.StartNew(action, CancellationToken.None, TaskCreationOptions.DenyChildAttach, _taskScheduler);

    private sealed class ReplicaSynchronizationContext(AsyncContextReplica context) : SynchronizationContext
    {
        public AsyncContextReplica Context { get; } = context;

        public override void Post(SendOrPostCallback d, object? state) =>
            Context.Enqueue(Context.RunOnContext(() => d(state)), propagateExceptions: true);

        public override void Send(SendOrPostCallback d, object? state)
        {
            if (AsyncContextReplica.Current == Context)
            {
                d(state);
            }
            else
            {
                Context.RunOnContext(() => d(state)).GetAwaiter().GetResult();
            }
        }

        public override void OperationStarted() => Context.OperationStarted();

        public override void OperationCompleted() => Context.OperationCompleted();

        public override SynchronizationContext CreateCopy() => new ReplicaSynchronizationContext(Context);

        public override int GetHashCode() => Context.GetHashCode();

        public override bool Equals(object? obj) => obj is ReplicaSynchronizationContext other && other.Context == Context;
    }

    private sealed class ReplicaTaskScheduler(AsyncContextReplica context) : TaskScheduler
    {
        public override int MaximumConcurrencyLevel => 1;

        public void DoTryExecuteTask(Task task) => TryExecuteTask(task);

        protected override IEnumerable<Task> GetScheduledTasks() =>
            context._queue.Select(static entry => entry.Task);

        protected override void QueueTask(Task task) => context.Enqueue(task, propagateExceptions: false);

        protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) =>
            AsyncContextReplica.Current == context && TryExecuteTask(task);
    }
}

/// <summary>A dedicated thread running an <see cref="AsyncContextReplica"/>, like Nito.AsyncEx's <c>AsyncContextThread</c>.</summary>
public sealed class AsyncContextThreadReplica : IDisposable
{
    private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public AsyncContextThreadReplica()
    {
        Context = new AsyncContextReplica();
        Context.OperationStarted(); // the thread's own hold, released by JoinAsync
        var thread = new Thread(() =>
        {
            try
            {
                Context.Execute();
                _done.TrySetResult();
            }
            catch (Exception ex)
            {
                _done.TrySetException(ex);
            }
        })
        { IsBackground = true, Name = nameof(AsyncContextThreadReplica) };
        thread.Start();
    }

    public AsyncContextReplica Context { get; }

    public TaskFactory Factory => Context.Factory;

    public Task JoinAsync()
    {
        Context.OperationCompleted();
        return _done.Task;
    }

    public void Dispose() => JoinAsync().GetAwaiter().GetResult();
}
