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
internal sealed class ScopeCompletion<TResult> : ScopeCompletion
{
    // Continuations of the scope's awaiter never run inline on the thread that completed the last child.
    private readonly TaskCompletionSource<TResult> _task = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Task? _body;

    public Task<TResult> Task => _task.Task;

    public override Task StartBody(Delegate body, TaskScope scope) =>
        body is Func<TaskScope, Task<TResult>> typed ? typed(scope) : ((Func<TaskScope, Task>)body)(scope);

    public override void SetBody(Task body) => _body = body;

    public override void Fail(IEnumerable<Exception> failures) => _task.TrySetException(failures);

    public override void Cancel(CancellationToken token) => _task.TrySetCanceled(token);

    public override void Succeed() => _task.TrySetResult(_body is Task<TResult> typed ? typed.Result : default!);
}
