using System;

namespace LeaseWorker;

/// <summary>One mode's row of the report.</summary>
/// <param name="Bound">The lower bound on the makespan for this mode (see <see cref="LowerBound"/>).</param>
/// <param name="CpuThreads">The threads that can run the CPU work at once in this mode, or null when unlimited.</param>
/// <param name="CpuTime">Process CPU time (all threads but the stall monitor) consumed during the run.</param>
/// <param name="LoopCpuTime">CPU time of the one thread that runs the worker (single-threaded modes only): the CPU parts when they
/// spin, plus the scheduling itself. With sleeping CPU parts, it is the cost of scheduling alone.</param>
/// <param name="PeakThreads">The most threads that were inside a CPU part at the same time.</param>
/// <param name="MachineStall">The worst oversleep of a bystander thread during the run (see <see cref="StallMonitor"/>).</param>
/// <param name="ThreadPoolDelay">The longest a thread-pool work item waited to start during the run (timers complete there).</param>
/// <param name="SeedLaps">Queue round trips spent in the seed's Prioritize (seed-prioritize only).</param>
/// <param name="WorstTimerLateness">The longest a refresh delay's continuation ran after the delay was due (see <see cref="Worker.WorstTimerLateness"/>).</param>
public sealed record ModeResult(
    string Mode,
    string RunsOn,
    BusTotals Bus,
    TimeSpan Makespan,
    TimeSpan Bound,
    int? CpuThreads,
    TimeSpan CpuTime,
    TimeSpan? LoopCpuTime,
    int PeakThreads,
    TimeSpan MachineStall,
    TimeSpan ThreadPoolDelay,
    long? SeedLaps,
    TimeSpan WorstTimerLateness)
{
    public double MakespanOverBound => Makespan / Bound;
}
