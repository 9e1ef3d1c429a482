namespace PriorityAsync;

/// <summary>Why a queued callback did not run.</summary>
public enum DropReason
{
    /// <summary>It was posted after the scheduler had finished (or while it was finishing), so no thread was left to run it.</summary>
    PostedAfterCompletion,

    /// <summary>It was queued when the scheduler stopped because of an unhandled exception (or its clock's failure).</summary>
    AbandonedAfterFault,

    /// <summary>
    /// It is a loop timer (an <see cref="System.Threading.ITimer"/> of <see cref="PriorityScheduler.TimeProvider"/>, or a pending
    /// <see cref="Priority.Delay"/>) that was still armed when the scheduler finished: timers do not keep a scheduler alive, so it
    /// never fired. <see cref="WorkDroppedEventArgs.State"/> is the timer.
    /// </summary>
    TimerArmedAtFinish,

    /// <summary>
    /// It was queued under a <see cref="PriorityTaskController"/> that was cancelled (<see cref="PriorityTaskController.Cancel"/>)
    /// before it could run, or was posted under it after that. <see cref="WorkDroppedEventArgs.Level"/> is the controller's level.
    /// </summary>
    Cancelled,
}
