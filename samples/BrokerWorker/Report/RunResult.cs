using System;
using BrokerWorker.Processes;
using MessageBus;

namespace BrokerWorker.Report;

/// <summary>One mode's run: the broker's counts (when the run ended, and after the workers stopped), the workers' views, the bound.</summary>
/// <param name="End">How the run ended: every message completed, or stopped (no progress, the deadline, every worker exited).</param>
/// <param name="AtEnd">The broker's counts when the last message was completed, or when the run was stopped.</param>
/// <param name="Final">The broker's counts after the workers stopped (a stopping worker abandons what it holds).</param>
/// <param name="PoolMinThreads">The threadpool mode's minimum threads; null in the other modes.</param>
public sealed record RunResult(
    string Mode,
    int Workers,
    string Bus,
    TimeSpan Makespan,
    RunEnd End,
    BusCounts AtEnd,
    BusCounts Final,
    ProcessStats Seen,
    TimeSpan Bound,
    int? PoolMinThreads)
{
    public double Ratio => Makespan / Bound;
}
