// Task.Wait() or await? The seed article "Should I Task.Wait() or await Task?" reproduced, then the same mistake on one thread.
//
//   1. The thread pool: a request every 2 ms, each one backend call. With await the pool serves them all with a few threads; with
//      .Wait() every request holds a thread for its whole call, the pool grows slowly, and far fewer are served (the seed: 3,200
//      against 12 in 60 s). Scaled here to 3 s and 100 ms calls.
//   2. One thread (a PriorityContextThread, as an actor or a worker loop would use): .Wait() on the loop for a call whose
//      continuation is queued to that same loop never returns. With StallTimeout set, the watchdog reports it (level, how long work
//      has waited) within the timeout, instead of a silent hang. The fix is the same: await.
//   3. Exceptions: Wait wraps the failure in AggregateException; await and PriorityContext.Run rethrow it as it was thrown.

using System;
using System.Globalization;
using PriorityAsync;
using Samples.Support;
using SyncOverAsync;

if (SampleCommandLine.Exit("SyncOverAsync", CommandLine.TryParse(args, out Settings settings, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

bool ok = true;
if (settings.Pool)
{
    Console.WriteLine(Invariant($"1. The thread pool: a request every {Ms(settings.Interval)} for {Seconds(settings.Duration)}, each one backend call of {Ms(settings.Latency)}."));
    Console.WriteLine();
    Console.WriteLine("   handler                     requests  served in window  served/s  peak pool threads  peak pool queue");
    PoolResult[] pool =
    [
        PoolExperiment.Run(Style.Await, settings.Duration, settings.Interval, settings.Latency),
        PoolExperiment.Run(Style.Wait, settings.Duration, settings.Interval, settings.Latency),
    ];
    foreach (PoolResult r in pool)
    {
        string handler = r.Style == Style.Await ? "await backend.CallAsync()" : "backend.CallAsync().Wait()";
        Console.WriteLine(Invariant($"   {handler,-27} {r.Started,8:N0}  {r.ServedInWindow,16:N0}  {r.ServedPerSecond,8:N0}  {r.PeakThreads,17}  {r.PeakQueueLength,15:N0}"));
        ok &= r.Drained;
    }

    Console.WriteLine(Invariant($"   await served {pool[0].ServedInWindow / (double)Math.Max(1, pool[1].ServedInWindow):0.#} times as many requests as Wait. Requests arriving after the window were turned away."));
    Console.WriteLine();
}

if (settings.Loop)
{
    Console.WriteLine(Invariant($"2. One thread: the same handler on a PriorityContextThread at level {LoopExperiment.RequestLevel}, StallTimeout = {Seconds(settings.StallTimeout)}."));
    Console.WriteLine();
    Console.WriteLine("   backend.CallAsync().Wait() on the loop (the call's continuation is queued to the loop it blocks). What the log shows:");
    StallResult blocked = LoopExperiment.Run(Style.Wait, settings.StallTimeout, settings.Latency, report => Console.WriteLine(Invariant(
        $"   warn: loop 'requests' stalled: level {report.Level} work has waited at least {Seconds(report.WaitingFor)} ({report.PendingCount} item(s) pending, StallTimeout {Seconds(report.StallTimeout)})")));
    Console.WriteLine(Invariant(
        $"   -> reported {Seconds(blocked.ReportedAfter ?? TimeSpan.Zero)} after the request started; the request: {blocked.RequestOutcome} (the sample releases the wait when the report comes;"));
    Console.WriteLine("      a plain .Wait() would hang for ever); the backend call then completed on the freed loop, and the loop ended: "
        + (blocked.BackendCallsCompleted == 1 && blocked.LoopEnded ? "yes." : "NO."));
    ok &= blocked.Reports.Length == 1 && blocked.BackendCallsCompleted == 1 && blocked.LoopEnded;

    Console.WriteLine();
    Console.WriteLine("   The fix, await backend.CallAsync() on the loop:");
    StallResult fixedResult = LoopExperiment.Run(Style.Await, settings.StallTimeout, settings.Latency);
    Console.WriteLine(Invariant(
        $"   -> request {fixedResult.RequestOutcome}, {fixedResult.Reports.Length} stall report(s) (watched for two timeouts after), loop ended: {(fixedResult.LoopEnded ? "yes" : "NO")}."));
    ok &= fixedResult.Reports.Length == 0 && fixedResult.RequestOutcome == "served" && fixedResult.LoopEnded;
    Console.WriteLine();
}

if (settings.Exceptions)
{
    Console.WriteLine("3. The call fails with InvalidOperationException(\"Operation was invalid\"). What each caller catches:");
    (Exception byWait, Exception byRun, Exception byAwait) = ExceptionExperiment.Run(TimeSpan.FromMilliseconds(10));
    Console.WriteLine($"   backend.CallAsync().Wait()                          {Describe(byWait)}");
    Console.WriteLine($"   PriorityContext.Run(async () => await CallAsync())  {Describe(byRun)}");
    Console.WriteLine($"   await backend.CallAsync() on the loop               {Describe(byAwait)}");
    ok &= byWait is AggregateException { InnerException: InvalidOperationException } && byRun is InvalidOperationException && byAwait is InvalidOperationException;
}

return ok ? 0 : 1;

static string Describe(Exception ex) => ex is AggregateException aggregate
    ? $"{ex.GetType().Name} wrapping {aggregate.InnerException!.GetType().Name}: {ex.Message}"
    : $"{ex.GetType().Name}: {ex.Message}";

static string Ms(TimeSpan value) => Invariant($"{value.TotalMilliseconds:0.#} ms");

static string Seconds(TimeSpan value) => Invariant($"{value.TotalSeconds:0.00} s");

static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
