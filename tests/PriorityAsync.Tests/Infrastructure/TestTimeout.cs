using System.Diagnostics;

namespace PriorityAsync.Tests.Infrastructure;

/// <summary>Bounded waits that fail loudly (vs-threading's UnexpectedTimeout): no test may hang, and no test asserts on timing.</summary>
public static class TestTimeout
{
    /// <summary>Long enough never to fire on a loaded 2-core CI machine; only a deadlock reaches it.</summary>
    public static readonly TimeSpan Unexpected = Debugger.IsAttached ? Timeout.InfiniteTimeSpan : TimeSpan.FromSeconds(30);

    public static async Task WithTimeout(this Task task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(Unexpected)).ConfigureAwait(false) != task)
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what} (a deadlock or a lost item).");
        }

        await task.ConfigureAwait(false);
    }

    public static async Task<T> WithTimeout<T>(this Task<T> task, string what)
    {
        await ((Task)task).WithTimeout(what).ConfigureAwait(false);
        return await task.ConfigureAwait(false);
    }

    public static void WaitOrFail(this ManualResetEventSlim e, string what)
    {
        if (!e.Wait(Unexpected))
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what}.");
        }
    }

    public static void WaitOrFail(this CountdownEvent e, string what)
    {
        if (!e.Wait(Unexpected))
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what} ({e.CurrentCount} of {e.InitialCount} signals missing).");
        }
    }

    public static void JoinOrFail(this Thread t, string what)
    {
        if (!t.Join(Unexpected))
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for thread: {what}.");
        }
    }

    /// <summary>Runs <paramref name="body"/> on a fresh thread (xunit installs its own SynchronizationContext) and fails if it hangs.</summary>
    public static void OnOwnThread(Action body, string what)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
            catch (Exception ex)
            {
                failure = ex;
            }
        })
        { IsBackground = true, Name = what };
        thread.Start();
        thread.JoinOrFail(what);
        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(failure).Throw();
        }
    }
}
