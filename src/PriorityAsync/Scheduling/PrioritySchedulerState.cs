namespace PriorityAsync;

/// <summary>The state of a priority scheduler (<see cref="PriorityScheduler.State"/>).</summary>
public enum PrioritySchedulerState
{
    /// <summary>Created, and its loop not started yet (a <see cref="PriorityContext"/> only: a pool runs from its creation).</summary>
    NotStarted,

    /// <summary>Running items.</summary>
    Running,

    /// <summary>Ended normally: nothing outstanding, nothing queued.</summary>
    Completed,

    /// <summary>Ended by an exception that no handler marked handled (or by its clock's failure).</summary>
    Faulted,
}
