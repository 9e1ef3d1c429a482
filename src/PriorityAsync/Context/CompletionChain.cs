using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One inline completion callback for a task the library completes itself (an operation's, a scope's). Those tasks run their own
/// continuations asynchronously (so a caller's code never runs on a scheduler's thread by accident), which would send work that waits
/// for them (an operation whose delegate returned one) through the thread pool; the library's own waiter takes this slot instead, and
/// is called inline right after the task completes.
/// </summary>
internal struct CompletionChain
{
    private static readonly Action<object?> s_done = static _ => { };

    private Action<object?>? _callback;
    private object? _state;

    /// <summary>The library task whose completion <paramref name="task"/> names: an operation's (through its node's work) or a scope's.</summary>
    public static bool TryChain(Task task, Action<object?> callback, object? state) =>
        task.AsyncState switch
        {
            WorkFlow { Work: IChainable chainable } => chainable.TryChain(task, callback, state),
            IChainable chainable => chainable.TryChain(task, callback, state),
            _ => false,
        };

    /// <summary>Takes the slot for <paramref name="callback"/>: false if it is taken, or the task has completed (the caller then waits
    /// another way).</summary>
    public bool TryTake(Task task, Action<object?> callback, object? state)
    {
        _state = state;
        if (Interlocked.CompareExchange(ref _callback, callback, null) is not null)
        {
            return false;
        }

        if (task.IsCompleted && ReferenceEquals(Interlocked.CompareExchange(ref _callback, null, callback), callback))
        {
            return false; // completed meanwhile, and its Run has not taken the callback: give the slot back
        }

        return true;
    }

    /// <summary>After the task was completed: calls the chained callback, once, if any.</summary>
    public void Run()
    {
        Action<object?>? callback = Interlocked.Exchange(ref _callback, s_done);
        if (callback is not null && !ReferenceEquals(callback, s_done))
        {
            callback(_state);
        }
    }
}

/// <summary>A library task's owner that offers its <see cref="CompletionChain"/>.</summary>
internal interface IChainable
{
    bool TryChain(Task task, Action<object?> callback, object? state);
}
