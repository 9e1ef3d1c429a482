using System.Diagnostics;
using System.Runtime.CompilerServices;

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

    /// <summary>The bounded wait for a <see cref="PriorityTask"/>'s task (no join: the test's waiting code runs off the scheduler).</summary>
    public static Task WithTimeout(this PriorityTask task, string what) => task.Task.WithTimeout(what);

    /// <summary>The bounded wait for a <see cref="PriorityTask{TResult}"/>'s task.</summary>
    public static Task<T> WithTimeout<T>(this PriorityTask<T> task, string what) => task.Task.WithTimeout(what);

    /// <summary>Polls <paramref name="condition"/> until it holds, for state that raises no event (a counter of another thread), and
    /// fails loudly if it never does. A poll, not a measurement: nothing is asserted on how long it took.</summary>
    public static async Task UntilAsync(Func<bool> condition, string what)
    {
        long deadline = Stopwatch.GetTimestamp() + (long)(Unexpected.TotalSeconds * Stopwatch.Frequency);
        while (!condition())
        {
            if (Unexpected != Timeout.InfiniteTimeSpan && Stopwatch.GetTimestamp() > deadline)
            {
                throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what}.");
            }

            await Task.Delay(1).ConfigureAwait(false);
        }
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

    /// <summary>A blocking wait for <paramref name="task"/> (for a synchronous test, or a thread of its own), bounded: rethrows what the
    /// task threw, unwrapped.</summary>
    public static void WaitOrFail(this Task task, string what)
    {
        if (Task.WaitAny([task], Unexpected) < 0)
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what} (a deadlock or a lost item).");
        }

        task.GetAwaiter().GetResult();
    }

    /// <summary>
    /// In place of <c>await using var loop = new PriorityContextThread(...)</c> (or <c>using var</c>, or a pool): <c>var loop = new ...;
    /// await using var disposeLoop = loop.BoundedDisposal();</c> disposes <paramref name="resource"/> at the end of the scope as its own
    /// disposal does (rethrowing its fault), and fails with <see cref="TimeoutException"/> naming it, and what still holds it open, if
    /// that never ends.
    /// </summary>
    /// <remarks>A loop's or a pool's disposal waits until no operation is outstanding and nothing is queued. An item the scheduler lost,
    /// or an operation the test never releases (because it failed before it could), would otherwise hang the whole test run without
    /// a word. When the test failed before, this timeout replaces that failure: read the state it reports.</remarks>
    public static BoundedDisposer BoundedDisposal(this IAsyncDisposable resource, [CallerArgumentExpression(nameof(resource))] string what = "")
        => new(resource, what);

    /// <summary>Disposes <paramref name="resource"/> now, awaiting its disposal with the usual timeout (see <see cref="BoundedDisposal"/>).</summary>
    public static async Task DisposeOrFailAsync(this IAsyncDisposable resource, [CallerArgumentExpression(nameof(resource))] string what = "")
    {
        Task disposal = resource.DisposeAsync().AsTask();
        if (await Task.WhenAny(disposal, Task.Delay(Unexpected)).ConfigureAwait(false) != disposal)
        {
            throw DisposalTimedOut(resource, what);
        }

        await disposal.ConfigureAwait(false);
    }

    /// <summary>Disposes <paramref name="resource"/> now, blocking with the usual timeout (for a synchronous test; no thread-pool thread
    /// is needed, so it also works while the .NET thread pool is starved).</summary>
    public static void DisposeOrFail(this IAsyncDisposable resource, [CallerArgumentExpression(nameof(resource))] string what = "")
    {
        Task disposal = resource.DisposeAsync().AsTask();
        if (Task.WaitAny([disposal], Unexpected) < 0)
        {
            throw DisposalTimedOut(resource, what);
        }

        disposal.GetAwaiter().GetResult();
    }

    private static TimeoutException DisposalTimedOut(IAsyncDisposable resource, string what)
    {
        string state = resource switch
        {
            PriorityContextThread thread => Describe($"the PriorityContextThread '{thread.Context.Name}'", thread.Context.GetSnapshot()),
            PriorityThreadPool pool => Describe($"the PriorityThreadPool '{pool.Name}'", pool.GetSnapshot()),
            SchedulerHost host => Describe($"the scheduler {host.Scheduler}", host.Scheduler.GetSnapshot()),
            _ => resource.GetType().Name,
        };
        return new TimeoutException(
            $"Timed out after {Unexpected.TotalSeconds} s waiting for the disposal of {what} ({state}): an operation that never ends, " +
            "an item that never returns, or a lost item or wake-up.");
    }

    private static string Describe(string name, PrioritySchedulerSnapshot snapshot) =>
        $"{name}: {snapshot.State}, {snapshot.OutstandingOperations} operation(s) outstanding, " +
        $"queued per level [{string.Join(", ", snapshot.PendingPerLevel)}]";

    /// <summary>What <see cref="BoundedDisposal"/> returns: disposes its resource with the usual timeout, from <c>await using</c> or
    /// <c>using</c>.</summary>
    public sealed class BoundedDisposer(IAsyncDisposable resource, string what) : IAsyncDisposable, IDisposable
    {
        public ValueTask DisposeAsync() => new(resource.DisposeOrFailAsync(what));

        public void Dispose() => resource.DisposeOrFail(what);
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
