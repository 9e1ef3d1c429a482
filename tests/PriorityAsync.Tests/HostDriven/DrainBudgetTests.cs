using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Tests.HostDriven.HostThread;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>
/// What a host's drain runs, in what order, and where its budget stops it: on a test clock that only the items advance, so every
/// figure is exact whatever the machine's load.
/// </summary>
public class DrainBudgetTests
{
    [Fact]
    public void Drain_ItemsAtSeveralLevels_RunHighestLevelFirstAndFifoWithinALevel()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(0, "load a", log);
            host.PostWork(1, "animate a", log);
            host.PostWork(0, "load b", log);
            host.PostWork(2, "input a", log);
            host.PostWork(1, "animate b", log);
            host.PostWork(2, "input b", log);

            PriorityDrainResult result = host.Driver.Drain();

            log.Should().Equal("input a", "input b", "animate a", "animate b", "load a", "load b");
            result.Should().Be(new PriorityDrainResult(6, WorkRemains: false, BudgetSpent: false, TimeSpan.Zero));
        });
    }

    [Fact]
    public void Drain_NothingQueued_ReturnsTheEmptyResult()
    {
        HostThread.Run(host =>
        {
            host.Driver.Drain(Ms(4)).Should().Be(default(PriorityDrainResult));
            host.Driver.Drain().Should().Be(default(PriorityDrainResult));
        });
    }

    [Fact]
    public void Drain_Budget_StartsItemsOnlyWhileItLastsAndLeavesTheRestForTheNextDrain()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            for (int i = 0; i < 10; i++)
            {
                host.PostWork(0, $"item {i}", log, milliseconds: 1);
            }

            // Items start at 0, 1, 2 and 3 ms; the reading at 4 ms is past the 3.5 ms budget.
            PriorityDrainResult first = host.Driver.Drain(Ms(3.5));
            PriorityDrainResult second = host.Driver.Drain(Ms(3.5));
            PriorityDrainResult third = host.Driver.Drain(Ms(3.5));

            first.Should().Be(new PriorityDrainResult(4, WorkRemains: true, BudgetSpent: true, Ms(4)));
            second.Should().Be(new PriorityDrainResult(4, WorkRemains: true, BudgetSpent: true, Ms(4)));
            third.Should().Be(new PriorityDrainResult(2, WorkRemains: false, BudgetSpent: false, Ms(2)));
            log.Should().Equal(Enumerable.Range(0, 10).Select(i => $"item {i}"));
        });
    }

    [Fact]
    public void Drain_ZeroBudget_StartsNothingButTheExemptLevels()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(0, "load", log);
            host.PostWork(2, "input", log);

            PriorityDrainResult result = host.Driver.Drain(TimeSpan.Zero, alwaysDrainFromLevel: 2);

            log.Should().Equal("input");
            result.Should().Be(new PriorityDrainResult(1, WorkRemains: true, BudgetSpent: true, TimeSpan.Zero));
        });
    }

    [Fact]
    public void Drain_ItemLongerThanTheBudget_RunsToItsEndAndTheDrainStopsRightAfter()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(1, "long", log, milliseconds: 10);
            host.PostWork(1, "next", log, milliseconds: 1);

            PriorityDrainResult result = host.Driver.Drain(Ms(2));

            log.Should().Equal("long");
            result.Should().Be(new PriorityDrainResult(1, WorkRemains: true, BudgetSpent: true, Ms(10)),
                "an item is not interrupted: the drain overruns its budget by that item's length, and starts nothing after it");
        });
    }

    [Fact]
    public void Drain_AlwaysDrainFromLevel_RunsTheExemptLevelsAfterTheBudgetIsSpentUntilNoneHasWork()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(2, "input 1", log, milliseconds: 0.25);
            host.PostWork(1, "animate 1", log, milliseconds: 2);
            host.Post(1, () =>
            {
                log.Add("animate 2");
                host.PostWork(2, "input 2 (arrived during the drain)", log, milliseconds: 0.25);
                host.Clock.Advance(Ms(2));
            });
            host.PostWork(1, "animate 3", log, milliseconds: 2);
            host.PostWork(0, "load", log, milliseconds: 1);

            // 0.25 + 2 + 2 = 4.25 ms > 3 ms: after "animate 2" only level 2 may start.
            PriorityDrainResult result = host.Driver.Drain(Ms(3), alwaysDrainFromLevel: 2);

            log.Should().Equal("input 1", "animate 1", "animate 2", "input 2 (arrived during the drain)");
            result.Should().Be(new PriorityDrainResult(4, WorkRemains: true, BudgetSpent: true, Ms(4.5)));

            host.Driver.Drain(Ms(3), alwaysDrainFromLevel: 2).ItemsRun.Should().Be(2, "the next drain takes up animate 3 and the load");
            log.Should().EndWith(["animate 3", "load"]);
        });
    }

    [Fact]
    public void Drain_ItemsPostedDuringTheDrain_RunInItWhileTheBudgetLasts()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.Post(0, () =>
            {
                log.Add("first");
                host.PostWork(0, "posted by first", log);
                host.PostWork(1, "posted above by first", log);
            });

            PriorityDrainResult result = host.Driver.Drain(Ms(1));

            log.Should().Equal("first", "posted above by first", "posted by first");
            result.ItemsRun.Should().Be(3);
            result.WorkRemains.Should().BeFalse();
        });
    }

    [Fact]
    public void Checkpoint_InADrainWithABudget_YieldsOnceTheBudgetIsSpentSoALongMethodSpreadsOverDrains()
    {
        HostThread.Run(host =>
        {
            var chunksPerDrain = new List<int>();
            int chunks = 0;
            Task job = host.Context.InvokeAsync(
                async () =>
                {
                    for (int i = 0; i < 10; i++)
                    {
                        host.Clock.Advance(Ms(1));
                        chunks++;
                        await Priority.Checkpoint();
                    }
                },
                level: 0);

            while (chunks < 10 && chunksPerDrain.Count < 10)
            {
                int before = chunks;
                PriorityDrainResult result = host.Driver.Drain(Ms(3.5));
                chunksPerDrain.Add(chunks - before);
                result.BudgetSpent.Should().Be(chunks < 10, "the drains before the last stop on their budget");
            }

            chunksPerDrain.Should().Equal([4, 4, 2], "the checkpoint after the chunk that passed 3.5 ms yields; the drain then starts nothing");
            job.WaitOrFail("the job's task"); // completed from the thread pool: its continuation is ConfigureAwait(false)
        });
    }

    [Fact]
    public void Checkpoint_AtAnExemptLevel_DoesNotYieldForTheBudget()
    {
        HostThread.Run(host =>
        {
            int yields = 0;
            host.Post(2, () =>
            {
                host.Clock.Advance(Ms(5));
                if (Priority.ShouldYield)
                {
                    yields++;
                }
            });
            host.Post(1, () =>
            {
                host.Clock.Advance(Ms(5));
                if (Priority.ShouldYield)
                {
                    yields += 10;
                }
            });

            host.Driver.Drain(Ms(1), alwaysDrainFromLevel: 2);

            yields.Should().Be(0, "the level-2 item is exempt, and the level-1 item never started: the budget was spent before it");
            host.Driver.Drain(Ms(1));
            yields.Should().Be(10, "at level 1, 5 ms into a 1 ms budget, ShouldYield is true");
        });
    }

    [Fact]
    public void Checkpoint_InADrainWithoutABudget_YieldsOnlyToWorkAbove()
    {
        HostThread.Run(host =>
        {
            bool? shouldYield = null;
            host.Post(0, () =>
            {
                host.Clock.Advance(Ms(100));
                shouldYield = Priority.ShouldYield;
            });

            host.Driver.Drain();

            shouldYield.Should().BeFalse();
        });
    }

    [Fact]
    public void Drain_AgingPolicy_LowLevelRunsOnceItsWaitExpiresEvenWhenHigherLevelsFillEveryBudget()
    {
        List<string> Frames(PriorityPolicy policy)
        {
            var log = new List<string>();
            HostThread.Run(
                host =>
                {
                    host.PostWork(0, "load", log, milliseconds: 1);
                    for (int frame = 0; frame < 6; frame++)
                    {
                        for (int i = 0; i < 4; i++)
                        {
                            host.PostWork(1, $"f{frame}", log, milliseconds: 1);
                        }

                        host.Driver.Drain(Ms(2));
                        host.Clock.Advance(Ms(10)); // the rest of the frame
                    }
                },
                options =>
                {
                    options.Policy = policy;
                    options.Clock = options.TimeProvider; // the policy reads the same test clock
                });
            return log;
        }

        List<string> strict = Frames(PriorityPolicy.Strict);
        List<string> aging = Frames(PriorityPolicy.Aging(Ms(30), Ms(1000), Ms(1000)));

        strict.Should().NotContain("load", "the animation fills every budget, and strict priority never reaches level 0");
        aging.Should().Contain("load");
        aging.IndexOf("load").Should().BeLessThan(aging.Count - 1, "the load ran within a budget once its 30 ms bound had passed");
    }
}
