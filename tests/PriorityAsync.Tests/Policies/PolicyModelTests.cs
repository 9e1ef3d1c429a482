using FsCheck;
using FsCheck.Fluent;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Policies;

/// <summary>
/// Model-based tests of the policies (FsCheck): random plans of items (level, run time, children, share changes) run on a real loop
/// whose clock is a <see cref="ManualClock"/> moved only by the items themselves, and on <see cref="PolicyReferenceModel"/>; the order
/// the items ran in must be the same. Plus the two guarantees, as properties over random run times: aging's bound and the shares'
/// split. No timing: every clock reading is the injected clock's.
/// </summary>
public sealed class PolicyModelTests
{
    [Theory]
    [InlineData(PolicyChoice.Strict)]
    [InlineData(PolicyChoice.Aging)]
    [InlineData(PolicyChoice.Shares)]
    internal void RandomPlans_RunOrderEqualsReferenceModel(PolicyChoice policy) =>
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(150), Prop.ForAll(PolicyPlan.Arbitrary(policy), RunAndCompare));

    private static void RunAndCompare(PolicyPlan plan)
    {
        var model = new PolicyReferenceModel(plan);
        model.Run();
        RunReal(plan).Should().Equal(model.Log, $"the loop must run what the model runs, in order. Plan: {plan}");
    }

    private static List<string> RunReal(PolicyPlan plan)
    {
        var clock = new ManualClock();
        var log = new List<string>();
        var options = new PriorityContextOptions { Levels = PolicyPlan.Levels, Clock = clock, Policy = plan.CreatePolicy(), Name = "policy-model" };
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    for (int i = 0; i < plan.Items.Count; i++)
                    {
                        clock.Advance(plan.Items[i].Gap);
                        Post(context, plan.Items[i].Item, i.ToString(System.Globalization.CultureInfo.InvariantCulture));
                    }
                },
                options),
            "a policy plan");
        return log;

        void Post(PriorityContext context, PlanItem item, string id) =>
            context.GetSynchronizationContext(item.Level).Post(_ => RunItem(context, item, id), null);

        void RunItem(PriorityContext context, PlanItem item, string id)
        {
            log.Add($"{id}@{PriorityContext.CurrentLevel}");
            clock.Advance(item.Duration);
            if (item.SetShares is { } set)
            {
                context.SetShares(set.Level, set.Shares);
            }

            for (int j = 0; j < item.Children.Count; j++)
            {
                Post(context, item.Children[j], $"{id}/{j}");
            }
        }
    }

    // ---- Aging: the bound ------------------------------------------------------------------------------------------------

    /// <summary>A top level that never empties (each top item queues the next before it ends) and a chain of lowest-level items (each
    /// queues the next): every lowest-level item waits at most its bound plus one item's run time.</summary>
    [Fact]
    public void Aging_TopLevelNeverEmpty_LowestLevelWaitsAtMostBoundPlusOneItem()
    {
        Gen<(int Bound, int[] Durations)> gen =
            from bound in Gen.Choose(1, 200)
            from durations in Gen.ArrayOf(Gen.Choose(1, 50), 64)
            select (bound, durations);
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(60), Prop.ForAll(Arb.From(gen), c =>
        {
            (long worstWait, long lowRuns) = RunStarvation(c.Bound, c.Durations);
            lowRuns.Should().BeGreaterThan(5, "the lowest level must run under a never-empty top level");
            worstWait.Should().BeLessThanOrEqualTo(c.Bound + c.Durations.Max(), $"bound {c.Bound} + the longest item {c.Durations.Max()}");
        }));
    }

    [Fact]
    public void Strict_TopLevelNeverEmpty_LowestLevelNeverRuns()
    {
        // The contrast the aging policy exists for: the same load under strict priority starves the lowest level.
        (_, long lowRuns) = RunStarvation(bound: null, durations: new[] { 5, 7, 3 });
        lowRuns.Should().Be(0);
    }

    private static (long WorstWait, long LowRuns) RunStarvation(int? bound, int[] durations)
    {
        const int TopItems = 2_000;
        var clock = new ManualClock();
        PriorityPolicy policy = bound is { } b
            ? PriorityPolicy.Aging(TimeSpan.FromMicroseconds(b), TimeSpan.FromDays(1), TimeSpan.FromDays(1))
            : PriorityPolicy.Strict;
        long worst = 0;
        long lowRuns = 0;
        int topRuns = 0;
        int next = 0;
        bool stop = false;
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    SynchronizationContext top = context.GetSynchronizationContext(2);
                    SynchronizationContext low = context.GetSynchronizationContext(0);
                    SendOrPostCallback? topItem = null;
                    SendOrPostCallback? lowItem = null;
                    topItem = _ =>
                    {
                        clock.Advance(durations[next++ % durations.Length]);
                        if (++topRuns < TopItems)
                        {
                            top.Post(topItem!, null);
                        }
                        else
                        {
                            stop = true;
                        }
                    };
                    lowItem = state =>
                    {
                        worst = Math.Max(worst, clock.Now - (long)state!);
                        lowRuns++;
                        clock.Advance(durations[next++ % durations.Length]);
                        if (!stop)
                        {
                            low.Post(lowItem!, clock.Now);
                        }
                    };
                    top.Post(topItem, null);
                    low.Post(lowItem, clock.Now);
                },
                new PriorityContextOptions { Levels = 3, Clock = clock, Policy = policy }),
            "the starvation scenario");

        // Under strict priority the low item runs once the top chain stops: that is not a run "under" the top level.
        return (worst, bound is null ? lowRuns - 1 : lowRuns);
    }

    // ---- Weighted shares: the split --------------------------------------------------------------------------------------

    /// <summary>Three levels kept backlogged (each item queues the next of its level), random run times up to D: at every item, each
    /// level's run time so far is within [-3 D, D] of its shares' part of the total (W1's bound: see WeightedSharesDispatch).</summary>
    [Fact]
    public void WeightedShares_ThreeLevelsBacklogged_RunTimeTracksSharesWithinOneItem()
    {
        Gen<(int[] Shares, int[] Durations)> gen =
            from shares in Gen.ArrayOf(Gen.Choose(1, 8), 3)
            from durations in Gen.ArrayOf(Gen.Choose(1, 40), 97)
            select (shares, durations);
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(40), Prop.ForAll(Arb.From(gen), c =>
        {
            const int Items = 3_000;
            var clock = new ManualClock();
            long[] runTime = new long[3];
            int ran = 0;
            int next = 0;
            double worstAbove = 0;
            double worstBelow = 0;
            int maxDuration = c.Durations.Max();
            double totalShares = c.Shares.Sum();
            TestTimeout.OnOwnThread(
                () => PriorityContext.Run(
                    () =>
                    {
                        PriorityContext context = PriorityContext.Current!;
                        for (int level = 0; level < 3; level++)
                        {
                            SynchronizationContext sc = context.GetSynchronizationContext(level);
                            SendOrPostCallback? item = null;
                            int myLevel = level;
                            item = _ =>
                            {
                                // W1 holds while every level stays backlogged: once a level's chain has ended (ran reached Items),
                                // the others may run ahead of its share (found by FsCheck: 53 over a bound of 40, shares 8:2:1).
                                long total = runTime.Sum();
                                for (int l = 0; l < 3 && ran < Items; l++)
                                {
                                    double error = runTime[l] - (total * c.Shares[l] / totalShares);
                                    worstAbove = Math.Max(worstAbove, error);
                                    worstBelow = Math.Min(worstBelow, error);
                                }

                                int duration = c.Durations[next++ % c.Durations.Length];
                                clock.Advance(duration);
                                runTime[myLevel] += duration;
                                if (++ran < Items)
                                {
                                    sc.Post(item!, null);
                                }
                            };
                            sc.Post(item, null);
                        }
                    },
                    new PriorityContextOptions { Levels = 3, Clock = clock, Policy = PriorityPolicy.WeightedShares(c.Shares) }),
                "three backlogged levels");
            worstAbove.Should().BeLessThanOrEqualTo(maxDuration, $"shares {string.Join(":", c.Shares)}");
            worstBelow.Should().BeGreaterThanOrEqualTo(-3 * maxDuration, $"shares {string.Join(":", c.Shares)}");
        }));
    }

    /// <summary>W2: a level idle while another ran alone for a long time must not bank that time as credit.</summary>
    [Fact]
    public void WeightedShares_LevelReturningFromIdle_CannotBankCredit()
    {
        var clock = new ManualClock();
        var log = new List<int>();
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    SynchronizationContext low = context.GetSynchronizationContext(0);
                    SynchronizationContext high = context.GetSynchronizationContext(2);
                    int lowRuns = 0;
                    SendOrPostCallback? lowItem = null;
                    lowItem = _ =>
                    {
                        log.Add(0);
                        clock.Advance(10);
                        if (++lowRuns == 100)
                        {
                            // Level 2 has been idle for 1,000 ticks of level 0's run time; now it gets 20 items of 10 ticks.
                            for (int i = 0; i < 20; i++)
                            {
                                high.Post(_ =>
                                {
                                    log.Add(2);
                                    clock.Advance(10);
                                }, null);
                            }
                        }

                        if (lowRuns < 130)
                        {
                            low.Post(lowItem!, null);
                        }
                    };
                    low.Post(lowItem, null);
                },
                new PriorityContextOptions { Levels = 3, Clock = clock, Policy = PriorityPolicy.WeightedShares(1, 1, 1) }),
            "idle level returns");

        // With equal shares the two levels alternate from the moment level 2 has work; banked credit would run all 20 level-2 items first.
        List<int> afterReturn = log.Skip(100).Take(20).ToList();
        afterReturn.Count(l => l == 0).Should().BeInRange(9, 11, string.Join("", afterReturn));
    }

    [Fact]
    public void WeightedShares_SetSharesWhileRunning_ChangesTheSplitFromThenOn()
    {
        var clock = new ManualClock();
        var before = new int[3];
        var after = new int[3];
        TestTimeout.OnOwnThread(
            () => PriorityContext.Run(
                () =>
                {
                    PriorityContext context = PriorityContext.Current!;
                    int ran = 0;
                    for (int level = 0; level < 2; level++)
                    {
                        int myLevel = level;
                        SynchronizationContext sc = context.GetSynchronizationContext(level);
                        SendOrPostCallback? item = null;
                        item = _ =>
                        {
                            (ran < 400 ? before : after)[myLevel]++;
                            clock.Advance(10);
                            if (++ran == 400)
                            {
                                context.SetShares(0, 3); // from 1:1 to 3:1
                                context.GetShares(0).Should().Be(3);
                            }

                            if (ran < 800)
                            {
                                sc.Post(item!, null);
                            }
                        };
                        sc.Post(item, null);
                    }
                },
                new PriorityContextOptions { Levels = 3, Clock = clock, Policy = PriorityPolicy.WeightedShares(1, 1, 1) }),
            "shares changed while running");

        before[0].Should().BeInRange(199, 201, "1:1 at first");
        after[0].Should().BeInRange(298, 302, "3:1 after SetShares(0, 3)");
    }
}
