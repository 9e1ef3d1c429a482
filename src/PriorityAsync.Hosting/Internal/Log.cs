using System;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.Hosting.Internal;

/// <summary>The worker's log messages; event ids as in <see cref="PriorityWorkerEventIds"/>.</summary>
internal static partial class Log
{
    [LoggerMessage(EventId = 1001, EventName = "UnhandledException", Level = LogLevel.Error,
        Message = "Worker {Worker}: an exception escaped a callback at level {Level}; the loop stops.")]
    public static partial void UnhandledException(ILogger logger, Exception exception, string worker, int level);

    [LoggerMessage(EventId = 1002, EventName = "WorkDropped", Level = LogLevel.Warning,
        Message = "Worker {Worker}: {Count} callbacks dropped ({PerLevel}).")]
    public static partial void WorkDropped(ILogger logger, string worker, long count, string perLevel);

    [LoggerMessage(EventId = 1003, EventName = "StallDetected", Level = LogLevel.Warning,
        Message = "Worker {Worker}: the loop has started nothing for {WaitingMilliseconds} ms while level {Level} work waits ({PendingCount} callbacks waiting, stall timeout {StallTimeoutMilliseconds} ms).")]
    public static partial void StallDetected(ILogger logger, string worker, int level, long waitingMilliseconds, int pendingCount, long stallTimeoutMilliseconds);

    [LoggerMessage(EventId = 1004, EventName = "StopTimedOut", Level = LogLevel.Warning,
        Message = "Worker {Worker}: the shutdown timeout ended before ExecuteAsync and the loop finished ({Pending}); the loop is left to end with the process.")]
    public static partial void StopTimedOut(ILogger logger, string worker, string pending);

    [LoggerMessage(EventId = 1005, EventName = "Started", Level = LogLevel.Debug,
        Message = "Worker {Worker}: loop running with {Levels} levels; ExecuteAsync started at level {Level}.")]
    public static partial void Started(ILogger logger, string worker, int levels, int level);

    [LoggerMessage(EventId = 1006, EventName = "Stopped", Level = LogLevel.Debug,
        Message = "Worker {Worker}: stopped.")]
    public static partial void Stopped(ILogger logger, string worker);
}
