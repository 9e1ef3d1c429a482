using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Timers;

/// <summary>
/// A fired periodic loop timer and a <see cref="Priority.Delay"/> allocate nothing in steady state, measured on the loop thread (which
/// queues the firing, runs it and resumes the awaiter) in the style of <see cref="AllocationTests"/>.
/// </summary>
public class TimerAllocationTests
{
    private const int Warm = 50;
    private const int Measured = 500;
    private const double BudgetBytesPerFiring = 2.0;

    [Fact]
    public async Task PeriodicTimer_Firing_AllocatesNothingInSteadyState()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        var done = new TaskCompletionSource<double>(TaskCreationOptions.RunContinuationsAsynchronously);
        var counter = new Counter();
        using ITimer timer = loop.Context.TimeProvider.CreateTimer(
            static state =>
            {
                var c = (Counter)state!;
                c.Count++;
                if (c.Count == Warm)
                {
                    c.Before = GC.GetAllocatedBytesForCurrentThread();
                }
                else if (c.Count == Warm + Measured)
                {
                    c.Done!.SetResult((GC.GetAllocatedBytesForCurrentThread() - c.Before) / (double)Measured);
                }
            },
            counter.With(done),
            TimeSpan.FromMilliseconds(1),
            TimeSpan.FromMilliseconds(1));

        double bytesPerFiring = await done.Task.WithTimeout("the firings");
        bytesPerFiring.Should().BeLessThan(BudgetBytesPerFiring, "the firing travels as (static callback, timer): nothing per firing");
    }

    [Fact]
    public async Task PriorityDelay_AllocatesNothingInSteadyState()
    {
        var loop = new PriorityContextThread();
        await using var disposeLoop = loop.BoundedDisposal();
        double bytesPerDelay = await loop.Context.RunOn(0, async () =>
        {
            for (int i = 0; i < Warm; i++)
            {
                await Delay(TimeSpan.FromMilliseconds(1));
            }

            // Five windows, the lowest kept: steady state is what is asserted. Once, in a full parallel run, about 2 KB landed in the
            // measured delays (4.3 B per delay over 500; not reproduced alone): a one-time cost of the loop thread, most likely the
            // runtime's first contended wait on the wake event (the loop's own timed wait, T3, and the alarm's Set meeting), not a cost
            // per delay.
            double lowest = double.MaxValue;
            for (int window = 0; window < 5; window++)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < Measured / 5; i++)
                {
                    await Delay(TimeSpan.FromMilliseconds(1));
                }

                lowest = Math.Min(lowest, (GC.GetAllocatedBytesForCurrentThread() - before) / (double)(Measured / 5));
            }

            return lowest;
        }).WithTimeout("the delays");

        bytesPerDelay.Should().BeLessThan(BudgetBytesPerFiring, "the pooled source is the timer entry and the awaited source at once");
    }

    private sealed class Counter
    {
        public int Count;
        public long Before;
        public TaskCompletionSource<double>? Done;

        public Counter With(TaskCompletionSource<double> done)
        {
            Done = done;
            return this;
        }
    }
}
