using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>The task of a <see cref="TaskScope"/> opened by <c>RunAsync</c>: completed once ([K-SCOPE]), with the body's result when the
/// scope succeeded.</summary>
internal abstract class ScopeCompletion
{
    /// <summary>Calls the body.</summary>
    public abstract Task StartBody(Delegate body, TaskScope scope);

    /// <summary>Remembers the body's task, for its result.</summary>
    public abstract void SetBody(Task body);

    public abstract void Fail(IEnumerable<Exception> failures);

    public abstract void Cancel(CancellationToken token);

    public abstract void Succeed();
}

/// <summary>A <see cref="ScopeCompletion"/> whose task carries a <typeparamref name="TResult"/>.</summary>
/// <typeparam name="TResult">The body's result type; <see cref="object"/> (always <see langword="null"/>) for a plain <see cref="Task"/>.</typeparam>
internal sealed class ScopeCompletion<TResult> : ScopeCompletion, IChainable
{
    // Continuations of the scope's awaiter never run inline on the thread that completed the last child; a library waiter (an
    // operation whose work returned the scope's task) is called inline through the chain instead of the thread pool.
    private readonly TaskCompletionSource<TResult> _task;
    private Task? _body;
    private CompletionChain _chain;

    public ScopeCompletion() => _task = new(this, TaskCreationOptions.RunContinuationsAsynchronously);

    public Task<TResult> Task => _task.Task;

    public override Task StartBody(Delegate body, TaskScope scope) =>
        body is Func<TaskScope, Task<TResult>> typed ? typed(scope) : ((Func<TaskScope, Task>)body)(scope);

    public override void SetBody(Task body) => _body = body;

    public override void Fail(IEnumerable<Exception> failures)
    {
        _task.TrySetException(failures);
        _chain.Run();
    }

    public override void Cancel(CancellationToken token)
    {
        _task.TrySetCanceled(token);
        _chain.Run();
    }

    public override void Succeed()
    {
        _task.TrySetResult(_body is Task<TResult> typed ? typed.Result : default!);
        _chain.Run();
    }

    public bool TryChain(Task task, IChainWaiter waiter) => _chain.TryTake(task, waiter);
}
