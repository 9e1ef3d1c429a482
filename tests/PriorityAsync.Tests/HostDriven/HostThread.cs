using Microsoft.Extensions.Time.Testing;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>
/// Runs a test body on a thread of its own that plays the host (a game's main thread, a UI thread): the context is attached there, so
/// xunit's own SynchronizationContext never takes part. Items "take" time by advancing <see cref="Clock"/>, the context's
/// <see cref="PrioritySchedulerOptions.TimeProvider"/>, on which the drain's budget is measured: results are exact at any load.
/// </summary>
public sealed class HostThread
{
    private HostThread(PriorityContextDriver driver, FakeTimeProvider clock)
    {
        Driver = driver;
        Clock = clock;
    }

    public PriorityContextDriver Driver { get; }

    public PriorityContext Context => Driver.Context;

    public FakeTimeProvider Clock { get; }

    /// <summary>Attaches a context (3 levels by default, no stall watchdog, no time quota unless <paramref name="configure"/> sets
    /// them) on a new thread, runs <paramref name="body"/> there, then disposes the driver; rethrows what the body threw.</summary>
    public static void Run(Action<HostThread> body, Action<PriorityContextOptions>? configure = null, Action? workAvailable = null) =>
        TestTimeout.OnOwnThread(
            () =>
            {
                var clock = new FakeTimeProvider();
                var options = new PriorityContextOptions { Levels = 3, TimeProvider = clock, StallTimeout = null, TimeSlice = null, Name = "host" };
                configure?.Invoke(options);
                PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(options, workAvailable);
                try
                {
                    body(new HostThread(driver, clock));
                }
                finally
                {
                    try
                    {
                        driver.Dispose();
                    }
                    catch (Exception)
                    {
                        // The body's assertions are what the test reports; an outcome it left is its own business.
                    }
                }
            },
            "the host thread");

    /// <summary>Queues <paramref name="action"/> at <paramref name="level"/> (from the calling thread, in its program order).</summary>
    public void Post(int level, Action action) =>
        Context.GetSynchronizationContext(level).Post(static state => ((Action)state!)(), action);

    /// <summary>An item that records <paramref name="name"/> in <paramref name="log"/> and takes <paramref name="milliseconds"/> of the
    /// test clock.</summary>
    public void PostWork(int level, string name, List<string> log, double milliseconds = 0) =>
        Post(level, () =>
        {
            log.Add(name);
            Clock.Advance(TimeSpan.FromMilliseconds(milliseconds));
        });

    public static TimeSpan Ms(double milliseconds) => TimeSpan.FromMilliseconds(milliseconds);
}
