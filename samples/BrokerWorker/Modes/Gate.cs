using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using PriorityAsync;

namespace BrokerWorker.Modes;

/// <summary>
/// What a mode puts at a scheduling point of the worker: nothing, a <c>Task.Yield()</c>, a task (the seed's <c>Prioritize</c>), or
/// PriorityAsync's <see cref="PriorityAwaitable"/>. The worker awaits it directly, in its own method body.
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

    private Gate(Kind kind, Task? task, PriorityAwaitable priority)
    {
        _kind = kind;
        _task = task;
        _priority = priority;
    }

    private enum Kind : byte
    {
        Open,
        Yield,
        Task,
        Priority,
    }

    /// <summary>A gate that does nothing: the code goes on at once.</summary>
    public static Gate Open => default;

    /// <summary>A <c>Task.Yield()</c>: the rest goes to the back of the current scheduler's queue.</summary>
    public static Gate Yield => new(Kind.Yield, null, default);

    public static Gate From(Task task) => new(Kind.Task, task, default);

    public static Gate From(PriorityAwaitable awaitable) => new(Kind.Priority, null, awaitable);

    public Awaiter GetAwaiter() => new(this);

    /// <summary>Forwards to the awaiter of what the gate holds.</summary>
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Kind _kind;
        private readonly TaskAwaiter _task;
        private readonly PriorityAwaitable.Awaiter _priority;

        internal Awaiter(Gate gate)
        {
            _kind = gate._kind;
            _task = gate._kind == Kind.Task ? gate._task!.GetAwaiter() : default;
            _priority = gate._kind == Kind.Priority ? gate._priority.GetAwaiter() : default;
        }

        public bool IsCompleted => _kind switch
        {
            Kind.Open => true,
            Kind.Yield => false,
            Kind.Task => _task.IsCompleted,
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
            }
        }
    }
}
