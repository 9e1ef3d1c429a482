using System;
using PriorityAsync;

namespace SyncOverAsync;

/// <summary>What happened to one request served on a <see cref="PriorityContextThread"/> with the stall watchdog on.</summary>
/// <param name="Style">How the handler waited for its backend call.</param>
/// <param name="Reports">The <see cref="PriorityContext.StallDetected"/> reports raised while the request ran (and for two timeouts after).</param>
/// <param name="ReportedAfter">From the request's start to the first report; null without a report.</param>
/// <param name="RequestOutcome">How the request ended: "served", or the exception it ended with.</param>
/// <param name="BackendCallsCompleted">Backend calls that came back by the end (the blocked one included, once the loop was free).</param>
/// <param name="LoopEnded">Whether the loop thread ended cleanly afterwards.</param>
internal sealed record StallResult(
    Style Style,
    StallDetectedEventArgs[] Reports,
    TimeSpan? ReportedAfter,
    string RequestOutcome,
    int BackendCallsCompleted,
    bool LoopEnded);
