using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// One inline completion waiter for a task the library completes itself (an operation's, a scope's). Those tasks run their own
/// continuations asynchronously (so a caller's code never runs on a scheduler's thread by accident), which would send work that waits
/// for them (an operation whose delegate returned one) through the thread pool; the library's own waiter takes this slot instead, and
/// is called inline right after the task completes. One field: the waiter, or a sentinel once the task has completed.
/// </summary>
internal struct CompletionChain
{
    private static readonly object s_done = new();

    private object? _waiter;

    /// <summary>Chains <paramref name="waiter"/> to the library task <paramref name="task"/> names (an operation's, through its node's work,
    /// or a scope's): false if <paramref name="task"/> is not one, its slot is taken, or it has completed (the caller then waits another way).</summary>
    public static bool TryChain(Task task, IChainWaiter waiter) =>
        task.AsyncState switch
        {
            WorkFlow { Work: IChainable chainable } => chainable.TryChain(task, waiter),
            IChainable chainable => chainable.TryChain(task, waiter),
            _ => false,
        };

    public bool TryTake(Task task, IChainWaiter waiter)
    {
        if (Interlocked.CompareExchange(ref _waiter, waiter, null) is not null)
        {
            return false;
        }

        if (task.IsCompleted && ReferenceEquals(Interlocked.CompareExchange(ref _waiter, null, waiter), waiter))
        {
            return false; // completed meanwhile, and its Run has not taken the waiter: give the slot back
        }

        return true;
    }

    /// <summary>After the task was completed: calls the chained waiter, once, if any.</summary>
    public void Run()
    {
        if (Interlocked.Exchange(ref _waiter, s_done) is IChainWaiter waiter)
        {
            waiter.OnChainedTaskCompleted();
        }
    }
}

/// <summary>A library task's owner that offers its <see cref="CompletionChain"/>.</summary>
internal interface IChainable
{
    bool TryChain(Task task, IChainWaiter waiter);
}

/// <summary>The library's waiter of a chained task: called inline once it has completed.</summary>
internal interface IChainWaiter
{
    void OnChainedTaskCompleted();
}
