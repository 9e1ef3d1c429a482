namespace PriorityAsync.Tests.Infrastructure;

/// <summary>Helpers to run code on a context's loop and to pause it, so a test can queue a known mix and compare the exact run order.</summary>
public static class LoopHarness
{
    /// <summary>Runs <paramref name="body"/> on the loop at <paramref name="level"/> and returns its task (await it with a timeout).</summary>
    public static Task<T> RunOn<T>(this PriorityContext context, int level, Func<Task<T>> body) =>
        context.GetTaskFactory(level).StartNew(body).Unwrap();

    public static Task RunOn(this PriorityContext context, int level, Func<Task> body) =>
        context.GetTaskFactory(level).StartNew(body).Unwrap();

    public static Task RunOn(this PriorityContext context, int level, Action body) =>
        context.GetTaskFactory(level).StartNew(body);

    /// <summary>
    /// Blocks the loop inside an item at the highest level and returns once it is blocked; disposing the result releases it.
    /// While paused, anything queued from other threads waits, so the order it then runs in is decided by the scheduler alone.
    /// </summary>
    public static Pause PauseLoop(this PriorityContext context)
    {
        var pause = new Pause();
        context.GetSynchronizationContext(context.Levels - 1).Post(static state => ((Pause)state!).Hold(), pause);
        pause.Entered.WaitOrFail("the loop to enter the pause item");
        return pause;
    }

    /// <summary>Posts a marker at level 0 and waits for it: everything queued before it at any level has then run.</summary>
    public static void Drain(this PriorityContext context)
    {
        using var done = new ManualResetEventSlim();
        context.GetSynchronizationContext(0).Post(static state => ((ManualResetEventSlim)state!).Set(), done);
        done.WaitOrFail("the loop to drain");
    }

    /// <summary>Waits (bounded) until the loop thread has parked.</summary>
    public static void WaitUntilParked(this PriorityContext context)
    {
        var deadline = DateTime.UtcNow + TestTimeout.Unexpected;
        while (!context.IsParked)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException("The loop never parked.");
            }

            Thread.Sleep(1);
        }
    }

    public sealed class Pause : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();

        public ManualResetEventSlim Entered { get; } = new();

        public void Hold()
        {
            Entered.Set();

            // Twice a test's own bound: a test that times out waiting for something while the loop is paused fails with its own message,
            // not with this one.
            if (!_release.Wait(TestTimeout.Unexpected * 2))
            {
                throw new TimeoutException("Timed out waiting for: the test to release the paused loop.");
            }
        }

        public void Dispose() => _release.Set();
    }
}
