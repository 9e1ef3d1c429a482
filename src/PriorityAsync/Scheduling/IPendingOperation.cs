namespace PriorityAsync.Internal;

/// <summary>
/// Work the library handed out a task for that has started on a scheduler and waits (an <c>InvokeAsync</c> operation, a controller's
/// <c>Run</c>, a scope's child): tracked by its scheduler while it waits, so that an end which drops what is queued completes its task
/// instead of leaving it waiting for a continuation that was dropped ([E-END], step 3).
/// </summary>
internal interface IPendingOperation
{
    /// <summary>The scheduler has ended while the work waited: complete the task (faulted with <see cref="System.ObjectDisposedException"/>)
    /// and release what the work held, unless the work's own end came first. Called once, on the thread that ends the scheduler; runs no
    /// user code (the task's continuations run asynchronously).</summary>
    void AbandonAtEnd();
}
