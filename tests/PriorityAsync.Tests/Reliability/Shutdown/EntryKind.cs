namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>How the scheduler of a shutdown round is consumed: every way a user can run one.</summary>
public enum EntryKind
{
    /// <summary>A <see cref="PriorityContextThread"/>: the loop on a thread of its own.</summary>
    LoopThread,

    /// <summary><see cref="PriorityContext.Run(Func{Task}, PriorityContextOptions?)"/> on a thread of the round: its entry is the owner.</summary>
    Run,

    /// <summary>A <see cref="PriorityThreadPool"/> of 1 to 3 threads, lock-free or capped (locked mode).</summary>
    Pool,

    /// <summary>A context a host thread drives with <see cref="PriorityContextDriver.Drain()"/>, waiting on <c>workAvailable</c>.</summary>
    HostDriven,

    /// <summary>The same with <see cref="PriorityContextDriver.Drain(TimeSpan)"/> and <c>Drain(budget, alwaysDrainFromLevel)</c>.</summary>
    HostDrivenBudget,
}
