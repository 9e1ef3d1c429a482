using System;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

// The context's side of PriorityTaskController (see the protocol at the top of Controllers/PriorityTaskController.cs). A controller queues its
// work in a FIFO of its own and keeps at most one "activation" item queued here, at its level; the loop treats an activation as any
// other item. Nothing below runs for work that does not use a controller: the loop and Post are unchanged, and the only branch the
// controllers add is in the drop path (Drop in Context/PriorityContext.cs), which is not the hot path.
public sealed partial class PriorityContext
{
    /// <summary>Creates a <see cref="PriorityTaskController"/> whose work runs on this context at <paramref name="level"/>.</summary>
    /// <param name="level">The level, from 0 to <c>Levels - 1</c>; higher runs first. <see cref="PriorityTaskController.SetLevel"/> changes it later.</param>
    /// <returns>A new controller.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="level"/> is outside the context's levels.</exception>
    /// <exception cref="ObjectDisposedException">The context has finished.</exception>
    public PriorityTaskController CreateController(int level) => new(this, level);

    /// <summary>Counts and reports one item of a controller that will never run. Any thread; never under the controller's lock.</summary>
    internal void DropControllerItem(int level, in WorkItem item, DropReason reason)
    {
        CountDrop(level, reason, item.Callback, item.State);
        OnDropped(level, item, reason);
    }

    internal void ThrowIfFinished(string operation, int level)
    {
        if (IsFinished)
        {
            throw new ObjectDisposedException(
                Name,
                $"The PriorityContext '{Name}' has finished ({State}), so {operation} (level {level}) cannot be used any more: a controller lives only as long as the loop of its context.");
        }
    }
}
