// CA1001 ("a type that owns a disposable field should be disposable"), where the type deliberately is not. Kept in one file, by type,
// rather than on each declaration, so the suppressions can be read (and challenged) together. Every field named here is a
// ManualResetEventSlim or CancellationTokenSource that never hands out its WaitHandle, or an event of a process-wide thread: none
// holds anything that Dispose would release earlier than the garbage collector does.

using System.Diagnostics.CodeAnalysis;

[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.Internal.SchedulerThread",
    Justification = "Event (ManualResetEventSlim, spinCount 0) waits on a monitor and never creates its kernel event (WaitHandle is "
        + "never read); posters on other threads may still Set it after the scheduler ended, so disposing it would only race them.")]
[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.TaskScope",
    Justification = "_cancellation has no timer and is linked to nothing (the outer token's registration is undone when the scope "
        + "completes); children and callers may keep its token after the scope completed. Nothing to release.")]
[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.PriorityTaskController",
    Justification = "_cancellation has no timer and is linked to nothing; its token is public (Token) and outlives the controller's "
        + "work. Nothing to release, and a disposable controller would ask every user for a using that does nothing.")]
[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.Internal.SendWaiter",
    Justification = "One thread-static waiter per sending thread, reused for every Send; its ManualResetEventSlim (spinCount 0) waits on "
        + "a monitor and never creates a kernel event.")]
[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.Internal.SliceClock",
    Justification = "A process-wide singleton (SliceClock.Shared) whose background thread waits on _signal for the life of the process.")]
[assembly: SuppressMessage("Reliability", "CA1001:Types that own disposable fields should be disposable", Scope = "type",
    Target = "~T:PriorityAsync.Internal.WatchdogThread",
    Justification = "A process-wide singleton (WatchdogThread.Shared) whose background thread waits on _signal for the life of the process.")]
