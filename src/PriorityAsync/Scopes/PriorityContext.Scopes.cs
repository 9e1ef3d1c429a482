using System;
using System.Collections.Generic;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The context's side of TaskScope: its root scope, whose lifetime is the loop's (K1-K3 in Scopes/TaskScope.cs).
public sealed partial class PriorityContext
{
    // Set once, as the loop ends (RunLoop): the root scope's failures, in the order they happened, for the owner of the loop.
    private IReadOnlyList<Exception>? _rootFailures;

    /// <summary>
    /// Gets the root scope: children started in it (<see cref="TaskScope.Start(Func{System.Threading.CancellationToken, System.Threading.Tasks.Task}, int)"/>,
    /// or <see cref="Priority.Start(Func{System.Threading.CancellationToken, System.Threading.Tasks.Task})"/> for short) belong to the loop
    /// itself: <see cref="Run(Func{System.Threading.Tasks.Task}, PriorityContextOptions?)"/> returns, and
    /// <see cref="PriorityContextThread.Completion"/> completes, only when they are done; the first failure cancels the others and is
    /// rethrown by <c>Run</c> (all of them fault <see cref="PriorityContextThread.Completion"/>).
    /// </summary>
    /// <remarks>Run's entry is the root scope's body: if it throws or is cancelled, the children are cancelled. A hosted
    /// <c>PriorityBackgroundService</c> cancels them with its stopping token and waits for them before it stops. A
    /// <see cref="PriorityContextThread"/> cancels nothing by itself: call <see cref="TaskScope.Cancel"/> to stop long-running children
    /// before disposing it.</remarks>
    public TaskScope Scope { get; }

    /// <summary>The root scope's failures once the loop has ended (null: none).</summary>
    internal IReadOnlyList<Exception>? RootFailures => _rootFailures;

    /// <summary>Called as the loop ends, after the last item: the root scope takes no more children.</summary>
    private void CompleteRootScope() => _rootFailures = Scope.CompleteRoot();
}
