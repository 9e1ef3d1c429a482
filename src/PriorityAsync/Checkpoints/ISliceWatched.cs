namespace PriorityAsync.Internal;

/// <summary>A scheduler the <see cref="SliceClock"/> watches: a single loop (<see cref="PriorityContext"/>, one item at a time) or a
/// pool (<see cref="PriorityThreadPool"/>, one item per thread, each thread watched on its own). Called by the clock's thread only
/// (or by a test driving the quota), except where noted.</summary>
internal interface ISliceWatched
{
    /// <summary>The clock's period for this scheduler: a quarter of its slice, at least 1 ms.</summary>
    int TimeSliceTickMilliseconds { get; }

    /// <summary>Whether every thread of the scheduler is parked (or about to park): then the clock may sleep (S1). Any thread.</summary>
    bool IsParked { get; }

    /// <summary>One tick: raises the quota flag of every item that has run a whole slice while work may wait (C1, C2). Returns whether
    /// any thread of the scheduler is awake.</summary>
    bool TickTimeSlice(long now);

    /// <summary>Before the clock sleeps: writes the dormant sentinel into every quota flag, so the next checkpoint wakes it (S1).</summary>
    void MarkSliceClockDormant();
}
