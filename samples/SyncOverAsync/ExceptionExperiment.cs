using System;
using PriorityAsync;

namespace SyncOverAsync;

/// <summary>The seed's last point: <c>Wait</c> wraps a failure in <see cref="AggregateException"/>; <c>await</c>, and
/// <see cref="PriorityContext.Run(Func{System.Threading.Tasks.Task}, PriorityContextOptions?)"/>, rethrow the exception itself.</summary>
internal static class ExceptionExperiment
{
    /// <summary>Runs a failing backend call three ways and returns what each caller caught.</summary>
    public static (Exception ByWait, Exception ByRun, Exception ByAwaitOnTheLoop) Run(TimeSpan latency)
    {
        var backend = new Backend(latency);

        Exception byWait = Catch(() => backend.CallAsync(fail: true).Wait());
        Exception byRun = Catch(() => PriorityContext.Run(async () => await backend.CallAsync(fail: true)));
        Exception? byAwait = null;
        PriorityContext.Run(async () =>
        {
            try
            {
                await backend.CallAsync(fail: true);
            }
            catch (Exception ex)
            {
                byAwait = ex;
            }
        });

        return (byWait, byRun, byAwait ?? throw new InvalidOperationException("The failing call did not fail."));
    }

    private static Exception Catch(Action action)
    {
        try
        {
            action();
        }
        catch (Exception ex)
        {
            return ex;
        }

        throw new InvalidOperationException("The failing call did not fail.");
    }
}
