using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using PriorityAsync;

namespace Samples.Support;

/// <summary>
/// What a mode of the lease-worker samples (LeaseWorker, BrokerWorker) puts at a scheduling point of the worker: nothing, a <c>Task.Yield()</c>, a task (the seed's <c>Prioritize</c>),
/// PriorityAsync's <see cref="PriorityAwaitable"/>, or its <see cref="CheckpointAwaitable"/>. The worker awaits it directly, in its own
/// method body.
/// </summary>
/// <remarks>
/// Why a struct awaitable and not a helper method returning a task: PriorityAsync carries the level in the current
/// SynchronizationContext, and an async method restores its caller's context when it returns (so a callee's Prioritize does not
/// change its caller's level). A helper <c>async Task EnterAsync(level) { await Prioritize(level); }</c> would therefore move only
/// itself; <c>await Prioritize(level)</c> must be awaited by the method whose level it sets. This awaiter forwards to the
/// PriorityAwaitable's own awaiter, so <c>GetResult</c> sets the level in the worker's method, exactly like a direct await.
/// </remarks>
public readonly struct Gate
{
    private readonly Kind _kind;
    private readonly Task? _task;
    private readonly PriorityAwaitable _priority;
    private readonly CheckpointAwaitable _checkpoint;

    private Gate(Kind kind, Task? task, PriorityAwaitable priority, CheckpointAwaitable checkpoint = default)
    {
        _kind = kind;
        _task = task;
        _priority = priority;
        _checkpoint = checkpoint;
    }

    private enum Kind : byte
    {
        Open,
        Yield,
        Task,
        Priority,
        Checkpoint,
    }

    /// <summary>A gate that does nothing: the code goes on at once.</summary>
    public static Gate Open => default;

    /// <summary>A <c>Task.Yield()</c>: the rest goes to the back of the current scheduler's queue.</summary>
    public static Gate Yield => new(Kind.Yield, null, default);

    /// <summary>Awaits a task (the seed's <c>Prioritize</c> protocol, a thread-pool hop).</summary>
    public static Gate From(Task task) => new(Kind.Task, task, default);

    /// <summary>Awaits PriorityAsync's <c>Prioritize(level)</c> in the worker's own method, so the level is the worker's.</summary>
    public static Gate From(PriorityAwaitable awaitable) => new(Kind.Priority, null, awaitable);

    /// <summary>Awaits PriorityAsync's <c>Checkpoint()</c>.</summary>
    public static Gate From(CheckpointAwaitable awaitable) => new(Kind.Checkpoint, null, default, awaitable);

    public Awaiter GetAwaiter() => new(this);

    /// <summary>Forwards to the awaiter of what the gate holds.</summary>
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Kind _kind;
        private readonly TaskAwaiter _task;
        private readonly PriorityAwaitable.Awaiter _priority;
        private readonly CheckpointAwaitable.Awaiter _checkpoint;

        internal Awaiter(Gate gate)
        {
            _kind = gate._kind;
            _task = gate._kind == Kind.Task ? gate._task!.GetAwaiter() : default;
            _priority = gate._kind == Kind.Priority ? gate._priority.GetAwaiter() : default;
            _checkpoint = gate._kind == Kind.Checkpoint ? gate._checkpoint.GetAwaiter() : default;
        }

        public bool IsCompleted => _kind switch
        {
            Kind.Open => true,
            Kind.Yield => false,
            Kind.Task => _task.IsCompleted,
            Kind.Checkpoint => _checkpoint.IsCompleted,
            _ => _priority.IsCompleted,
        };

        public void OnCompleted(Action continuation)
        {
            switch (_kind)
            {
                case Kind.Yield:
                    Task.Yield().GetAwaiter().OnCompleted(continuation);
                    break;
                case Kind.Task:
                    _task.OnCompleted(continuation);
                    break;
                case Kind.Priority:
                    _priority.OnCompleted(continuation);
                    break;
                case Kind.Checkpoint:
                    _checkpoint.OnCompleted(continuation);
                    break;
                default:
                    continuation();
                    break;
            }
        }

        public void UnsafeOnCompleted(Action continuation)
        {
            switch (_kind)
            {
                case Kind.Yield:
                    Task.Yield().GetAwaiter().UnsafeOnCompleted(continuation);
                    break;
                case Kind.Task:
                    _task.UnsafeOnCompleted(continuation);
                    break;
                case Kind.Priority:
                    _priority.UnsafeOnCompleted(continuation);
                    break;
                case Kind.Checkpoint:
                    _checkpoint.UnsafeOnCompleted(continuation);
                    break;
                default:
                    continuation();
                    break;
            }
        }

        public void GetResult()
        {
            switch (_kind)
            {
                case Kind.Task:
                    _task.GetResult();
                    break;
                case Kind.Priority:
                    _priority.GetResult();
                    break;
                case Kind.Checkpoint:
                    _checkpoint.GetResult();
                    break;
            }
        }
    }
}
