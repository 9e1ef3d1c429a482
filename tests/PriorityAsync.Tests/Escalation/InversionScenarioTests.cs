using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// The two priority-inversion scenarios of docs/concepts.md ("Priority inversion"), proven on a virtual clock where CPU work advances the
/// clock: a keeper at level 2 that needs, every 50 ms, either a lock that level 0 holds across a 2 ms I/O call, or work it starts at level
/// 0, while level 1 floods the loop with 5 ms CPU items for 3 s. Under strict priority, the keeper's worst wait is bounded by the critical
/// section plus one medium item: the medium item running when the keeper asks, during which the holder's I/O completes
/// (<see cref="Bound"/>). With a plain <see cref="SemaphoreSlim"/>, the same keeper waits for the flood to end.
/// </summary>
public class InversionScenarioTests
{
    private static readonly TimeSpan Run = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan Critical = TimeSpan.FromMilliseconds(2);
    private static readonly TimeSpan Medium = TimeSpan.FromMilliseconds(5);
    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(50);

    /// <summary>The keeper's worst wait: the medium item running when it asks, and the critical section (the holder's I/O may start only
    /// once the keeper has raised it). Hops cost nothing on the virtual clock.</summary>
    private static readonly TimeSpan Bound = Critical + Medium;

    [Fact]
    public void Lock_KeeperAtLevel2_WaitsAtMostTheCriticalSectionAndOneMediumItem()
    {
        var lk = new PriorityLock { Name = "client" };
        Result result = RunScenario(
            holder: async (clock, end) =>
            {
                while (clock.GetUtcNow() < end)
                {
                    using (await lk.LockAsync())
                    {
                        await Task.Delay(Critical, clock); // the I/O call, with the lock held
                    }
                }
            },
            keeperNeeds: async (clock, _) =>
            {
                using (await lk.LockAsync())
                {
                }
            });

        result.Rounds.Should().BeGreaterThan(50, "the keeper asks every 50 ms for 3 s");
        result.Contended.Should().BeGreaterThan(0, "the keeper must find the lock held at times, or the scenario proves nothing");
        result.WorstWait.Should().BeLessThanOrEqualTo(Bound, $"the holder runs at the keeper's level while it waits ({result})");
    }

    [Fact]
    public void AwaitedInvokeAsync_KeeperAtLevel2_WaitsAtMostTheWorksLengthAndOneMediumItem()
    {
        Result result = RunScenario(
            holder: null,
            keeperNeeds: async (clock, context) => await context.InvokeAsync(async () => await Task.Delay(Critical, clock), level: 0));

        result.Rounds.Should().BeGreaterThan(50);
        result.WorstWait.Should().BeLessThanOrEqualTo(Bound, $"the awaited work runs at the keeper's level until it completes ({result})");
        result.WorstWait.Should().BeGreaterThanOrEqualTo(Critical, "the work's I/O takes its time");
    }

    [Fact]
    public void SemaphoreSlim_KeeperAtLevel2_WaitsForTheWholeFlood()
    {
        // The baseline the bound is measured against: a lock that knows no levels leaves the holder behind the flood.
        var semaphore = new SemaphoreSlim(1, 1);
        Result result = RunScenario(
            holder: async (clock, end) =>
            {
                while (clock.GetUtcNow() < end)
                {
                    await semaphore.WaitAsync();
                    try
                    {
                        await Task.Delay(Critical, clock);
                    }
                    finally
                    {
                        semaphore.Release();
                    }
                }
            },
            keeperNeeds: async (_, _) =>
            {
                await semaphore.WaitAsync();
                semaphore.Release();
            });

        result.WorstWait.Should().BeGreaterThan(TimeSpan.FromSeconds(1), $"without inheritance the holder waits behind level 1 ({result})");
    }

    [Fact]
    public void PlainTaskOfInvokeAsync_KeptAsTask_IsNotRaised_ButPriorityJoinRaisesIt()
    {
        // The limit of what .NET lets the library see: awaiting the plain Task raises nothing; Priority.Join says "I wait on this".
        Result plain = RunScenario(
            holder: null,
            keeperNeeds: async (clock, context) =>
            {
                Task work = context.InvokeAsync(async () => await Task.Delay(Critical, clock), level: 0);
                await work;
            });
        Result joined = RunScenario(
            holder: null,
            keeperNeeds: async (clock, context) =>
            {
                Task work = context.InvokeAsync(async () => await Task.Delay(Critical, clock), level: 0);
                await Join(work);
            });

        plain.WorstWait.Should().BeGreaterThan(TimeSpan.FromSeconds(1), $"a plain Task is awaited as is ({plain})");
        joined.WorstWait.Should().BeLessThanOrEqualTo(Bound, $"Priority.Join raises the work ({joined})");
    }

    private static Result RunScenario(Func<VirtualTimeProvider, DateTimeOffset, Task>? holder, Func<VirtualTimeProvider, PriorityContext, Task> keeperNeeds)
    {
        var clock = new VirtualTimeProvider();
        var waits = new List<TimeSpan>();
        DateTimeOffset end = clock.GetUtcNow() + Run;
        PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                if (holder is not null)
                {
                    Start(_ => holder(clock, end), level: 0);
                }

                Start(
                    async stop =>
                    {
                        await Delay(TimeSpan.FromMilliseconds(1), stop); // level 0 takes the lock first, as in the run
                        while (clock.GetUtcNow() < end)
                        {
                            clock.Advance(Medium); // a CPU-bound item: nothing else runs on the loop meanwhile
                            await Yield();
                        }
                    },
                    level: 1);
                Start(
                    async stop =>
                    {
                        while (clock.GetUtcNow() < end)
                        {
                            await Delay(Period, stop);
                            DateTimeOffset asked = clock.GetUtcNow();
                            await keeperNeeds(clock, context);
                            waits.Add(clock.GetUtcNow() - asked);
                        }
                    },
                    level: 2);
                return Task.CompletedTask;
            },
            new PriorityContextOptions { Levels = 3, TimeProvider = clock });
        return new Result(waits.Count, waits.Count(wait => wait > TimeSpan.Zero), waits.Count == 0 ? TimeSpan.Zero : waits.Max());
    }

    private readonly record struct Result(int Rounds, int Contended, TimeSpan WorstWait)
    {
        public override string ToString() => $"{Rounds} rounds, {Contended} contended, worst wait {WorstWait.TotalMilliseconds} ms";
    }
}
