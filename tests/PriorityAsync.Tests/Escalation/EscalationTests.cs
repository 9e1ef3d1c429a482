using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// Escalation of awaited work on the loop ([X-JOIN], [X-MOVE], [X-PARENT]): what a wait raises, what it does not, and that the raised work
/// runs each item once and drops back when its task completes. Each test queues "medium" items at a level between the waiter's and the
/// work's before the waiter waits, so the order of the log shows whether the work ran at the waiter's level (before them) or its own.
/// </summary>
public class EscalationTests
{
    private const int Levels = 4;

    [Fact]
    public async Task AwaitInvokeAsync_FromAHigherLevel_RunsTheWorkBeforeTheLevelsBetween()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1", "m2");
            PriorityTask work = context.InvokeAsync(
                async () =>
                {
                    log.Add("w1");
                    await Yield(); // queued in the raised flow: still before the medium items
                    log.Add("w2");
                },
                level: 0);
            await work;
            log.Add("waiter");
        });

        log.Entries.Should().Equal("w1", "w2", "waiter", "m1", "m2");
    }

    [Fact]
    public void TwoFlowsThatWaitOnEachOther_ADeadlock_TheirFloorsAreReadWithoutEndlessRecursion()
    {
        // A cycle of waits is the user's deadlock; reading a floor must still end (each flow holds the other up from its field: the
        // walk stops where it meets itself). It overflowed the stack of the thread that read it, once in a randomized round.
        var context = new PriorityContext(new PriorityContextOptions { Levels = Levels });
        var a = new Internal.WorkFlow(context, 0, "a");
        var b = new Internal.WorkFlow(context, 1, "b");
        var aDone = new TaskCompletionSource();
        var bDone = new TaskCompletionSource();

        a.TryJoin(b, 1, aDone.Task).Should().BeTrue("b's code, at level 1, waits on a");
        b.TryJoin(a, 0, bDone.Task).Should().BeTrue("a's code waits on b: a cycle");

        a.Floor.Should().Be(1);
        b.Floor.Should().BeGreaterThanOrEqualTo(-1);
        aDone.SetResult();
        a.EndJoins();
        bDone.SetResult();
        b.EndJoins();
        a.Floor.Should().Be(-1);
    }

    [Fact]
    public async Task WhenAll_RaisesEveryWork_WithTheirResults()
    {
        var log = new Log();
        int[] results = [];
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1");
            PriorityTask<int>[] works = Enumerable.Range(0, 3).Select(i => context.InvokeAsync(() => { log.Add($"w{i}"); return Task.FromResult(i); }, level: 0)).ToArray();
            results = await PriorityTask.WhenAll(works);
            await PriorityTask.WhenAll([context.InvokeAsync(() => { log.Add("untyped"); return Task.CompletedTask; }, level: 1)]);
            log.Add("waiter");
        });

        results.Should().Equal(0, 1, 2);
        log.Entries.Should().Equal("w0", "w1", "w2", "untyped", "waiter", "m1");
    }

    [Fact]
    public async Task WhenAll_GathersEveryFailure_AsTaskWhenAllDoes()
    {
        Task? all = null;
        await OnLoop(2, async context =>
        {
            all = PriorityTask.WhenAll(
            [
                context.InvokeAsync(() => Task.FromException(new InvalidOperationException("first")), level: 0),
                context.InvokeAsync(async () => await Priority.Yield(), level: 1),
                context.InvokeAsync(() => Task.FromException(new ArgumentException("second")), level: 0),
            ]);
            Func<Task> awaiting = () => all;
            await awaiting.Should().ThrowAsync<InvalidOperationException>().WithMessage("first");
        });

        all!.Exception!.InnerExceptions.Select(e => e.Message).Should().Equal("first", "second");
        Action nullTasks = () => PriorityTask.WhenAll((IEnumerable<PriorityTask>)null!);
        nullTasks.Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public async Task AwaitInvokeAsync_FromTheSameLevel_ChangesNothing()
    {
        var log = new Log();
        await OnLoop(1, async context =>
        {
            Medium(context, log, 1, "m1");
            await context.InvokeAsync(() => { log.Add("w"); return Task.CompletedTask; }, level: 1);
            log.Add("waiter");
        });

        log.Entries.Should().Equal("m1", "w", "waiter");
    }

    [Fact]
    public async Task Join_IsTransitive_TheWorkTheRaisedWorkAwaitsIsRaisedToo()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1", "m2");
            PriorityTask middle = context.InvokeAsync(
                async () =>
                {
                    log.Add("middle starts");
                    await context.InvokeAsync(() => { log.Add("low"); return Task.CompletedTask; }, level: 0);
                    log.Add("middle ends");
                },
                level: 1);
            await middle;
        });

        log.Entries.Should().Equal("middle starts", "low", "middle ends", "m1", "m2");
    }

    [Fact]
    public async Task Join_RaisedLater_RaisesWhatTheWorkAlreadyWaitsOn()
    {
        // The work waits on lower work first; only then does a more urgent waiter arrive: the raise passes along the existing wait.
        var log = new Log();
        var lowStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await OnLoop(3, async context =>
        {
            var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            PriorityTask middle = context.InvokeAsync(
                async () =>
                {
                    await context.InvokeAsync(
                        async () =>
                        {
                            lowStarted.TrySetResult();
                            await gate.Task; // the low work is suspended when the waiter comes
                            log.Add("low resumes");
                        },
                        level: 0);
                    log.Add("middle ends");
                },
                level: 1);
            await lowStarted.Task;
            Medium(context, log, 2, "m1", "m2");
            gate.SetResult(); // the low work's continuation is queued at 0 now
            await middle;
        });

        log.Entries.Should().Equal("low resumes", "middle ends", "m1", "m2");
    }

    [Fact]
    public async Task RaisedWork_AfterItsTaskCompletes_GoesBackToItsOwnLevel()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1", "m2");
            await context.InvokeAsync(
                () =>
                {
#pragma warning disable PA0003 // on purpose: work left running by the work, part of its flow but not of what the waiter waits for
                    _ = StragglerAsync(log);
#pragma warning restore PA0003
                    log.Add("w");
                    return Task.CompletedTask;
                },
                level: 0);
            log.Add("waiter");
        });

        // s1 was queued while the work was raised; s2 after its task completed, so at level 0, behind the medium items.
        log.Entries.Should().Equal("w", "s1", "waiter", "m1", "m2", "s2");

        static async Task StragglerAsync(Log log)
        {
            await Yield();
            log.Add("s1");
            await Yield();
            log.Add("s2");
        }
    }

    [Fact]
    public async Task TwoFlowsWaitOnTheSameWork_TheLaterAndHigherOneRaisesIt()
    {
        // The first waiting flow is kept in a field of the work's flow, a second one waits through an edge ([X-JOIN]): both raise.
        var log = new Log();
        await OnLoop(3, async context =>
        {
            var gate = new TaskCompletionSource();
            PriorityTask work = context.InvokeAsync(
                async () =>
                {
                    await gate.Task;
                    log.Add("w");
                },
                level: 0);
            PriorityTask first = context.InvokeAsync(
                async () =>
                {
                    await work;
                    log.Add("first");
                },
                level: 1);
            await context.Yield(0); // the work waits on the gate, the first waiter (level 1) waits on the work
            await Prioritize(3);
            Medium(context, log, 2, "m1");
            PriorityTask second = context.InvokeAsync(
                async () =>
                {
                    await work;
                    log.Add("second");
                },
                level: 3);
            gate.SetResult(); // the work goes on at level 1 (its first waiter's) until the second waiter raises it to 3
            await second;
            log.Add("waiter");
            await first; // raises the first waiter too, whose continuation was queued at level 1
        });

        log.Entries.Should().Equal("w", "second", "waiter", "first", "m1");
    }

    [Fact]
    public async Task JoinBelowTheWorksLevel_WorkThatThenGoesLower_RunsThereAtTheWaitersLevel()
    {
        // The waiter (level 1) is below the work's own level (2), so the join changes nothing until the work moves below level 1: then
        // the waiter's level holds it up ([X-JOIN], a join at a fixed level that needed no recompute).
        var log = new Log();
        await OnLoop(1, async context =>
        {
            Medium(context, log, 0, "m0");
            await context.InvokeAsync(
                async () =>
                {
                    log.Add("w");
                    await Prioritize(0); // nothing waits above level 0: goes on at once
                    await Yield(); // queued in the flow's level-0 context, at the waiter's level
                    log.Add($"w at {CurrentLevel}");
                },
                level: 2);
            log.Add("waiter");
        });

        log.Entries.Should().Equal("w", "w at 0", "waiter", "m0");
    }

    [Fact]
    public async Task JoinBelowTheWorksLevel_AfterTheTaskCompletes_WhatTheWorkLeftBelowGoesBackToItsLevel()
    {
        var log = new Log();
        await OnLoop(1, async context =>
        {
            Medium(context, log, 0, "m0");
            await context.InvokeAsync(
                () =>
                {
#pragma warning disable PA0003 // on purpose: work left running by the work
                    _ = StragglerAsync(log);
#pragma warning restore PA0003
                    log.Add("w");
                    return Task.CompletedTask;
                },
                level: 2);
            log.Add("waiter");
        });

        // s2 was queued in the flow's level-0 context while the waiter (level 1) waited, so at level 1; s3 after the work's task
        // completed, at level 0 behind m0.
        log.Entries.Should().Equal("s1", "w", "s2", "waiter", "m0", "s3");

        static async Task StragglerAsync(Log log)
        {
            await Prioritize(0); // nothing waits above level 0: goes on at once
            log.Add("s1");
            await Yield();
            log.Add("s2");
            await Yield();
            log.Add("s3");
        }
    }

    [Fact]
    public async Task RaisedWork_PrioritizeAndCheckpointInside_StayRaised()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1");
            await context.InvokeAsync(
                async () =>
                {
                    await Prioritize(1); // inside the flow: level 1 of the flow, still raised to 3
                    log.Add($"p{CurrentLevel}");
                    await Checkpoint(); // nothing above the raised level waits: goes on at once
                    await Yield();
                    log.Add("after yield");
                },
                level: 0);
            log.Add("waiter");
        });

        log.Entries.Should().Equal("p1", "after yield", "waiter", "m1");
    }

    [Fact]
    public void RaisedWork_DelaysAndTimersItMade_FireAtTheRaisedLevel()
    {
        // On a virtual clock where each medium item takes 5 ms: the work's delays (10 ms each) come due during the medium items, and
        // their firings go through the raised flow, so the work goes on between two medium items rather than after all of them.
        var clock = new VirtualTimeProvider();
        var log = new Log();
        PriorityContext.Run(
            async () =>
            {
                PriorityContext context = PriorityContext.Current!;
                await Prioritize(3);
                PriorityTask work = context.InvokeAsync(
                    async () =>
                    {
                        await Delay(TimeSpan.FromMilliseconds(10));
                        log.Add("after Priority.Delay");
                        await Task.Delay(TimeSpan.FromMilliseconds(10), context.TimeProvider); // a loop timer made in the flow
                        log.Add("after Task.Delay");
                    },
                    level: 0);
                await context.Yield(0); // the work has armed its first delay
                await Prioritize(3);
                for (int i = 0; i < 10; i++)
                {
                    string name = $"m{i}";
                    context.GetSynchronizationContext(2).Post(
                        _ =>
                        {
                            clock.Advance(TimeSpan.FromMilliseconds(5));
                            log.Add(name);
                        },
                        null);
                }

                await work;
                log.Add("waiter");
            },
            new PriorityContextOptions { Levels = Levels, TimeProvider = clock });

        log.Entries.Should().Equal(
            "m0", "m1", "after Priority.Delay", "m2", "m3", "after Task.Delay", "waiter", "m4", "m5", "m6", "m7", "m8", "m9");
    }

    [Fact]
    public async Task ChildrenOfRaisedWork_AreRaisedWithIt()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1", "m2");
            await context.InvokeAsync(
                () => TaskScope.RunAsync(async scope =>
                {
                    scope.Start(
                        async _ =>
                        {
                            await Yield();
                            log.Add("child");
                        },
                        level: 0);
                    await Yield();
                    log.Add("body");
                }),
                level: 0);
            log.Add("waiter");
        });

        log.Entries.Should().Equal("body", "child", "waiter", "m1", "m2");
    }

    [Fact]
    public async Task JoiningAChild_DoesNotRaiseItsSiblings()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1");
            await TaskScope.RunAsync(async scope =>
            {
                PriorityTask awaited = scope.StartAsync(_ => { log.Add("awaited child"); return Task.CompletedTask; }, level: 0);
                scope.Start(_ => { log.Add("sibling"); return Task.CompletedTask; }, level: 0);
                await awaited;
                log.Add("waiter");
            });
        });

        log.Entries.Should().Equal("awaited child", "waiter", "m1", "sibling");
    }

    [Fact]
    public async Task AwaitControllerRun_RaisesTheWholeController()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            PriorityTaskController controller = context.CreateController(0);
            controller.Post(() => log.Add("controller's earlier item"));
            Medium(context, log, 2, "m1");
            await controller.Run(() => { log.Add("run"); return Task.CompletedTask; });
            log.Add("waiter");
            controller.Level.Should().Be(0, "the controller's own level never changed");
        });

        log.Entries.Should().Equal("controller's earlier item", "run", "waiter", "m1");
    }

    [Fact]
    public async Task Join_PlainTaskOfLibraryWork_RaisesIt_AndAForeignTaskIsAwaitedAsIs()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1");
            Task plain = context.InvokeAsync(() => { log.Add("w"); return Task.CompletedTask; }, level: 0);
            await Join(plain);
            log.Add("waiter");
            (await Join(Task.FromResult(7))).Should().Be(7);
        });

        log.Entries.Should().Equal("w", "waiter", "m1");
    }

    [Fact]
    public async Task Await_ConfigureAwaitFalse_RaisesTheWorkAll_TheSame()
    {
        var log = new Log();
        await OnLoop(3, async context =>
        {
            Medium(context, log, 2, "m1");
            await context.InvokeAsync(() => { log.Add("w"); return Task.CompletedTask; }, level: 0).ConfigureAwait(false);
            log.Add("waiter (off the loop)");
        });

        log.Entries.Should().StartWith("w");
        log.Entries.IndexOf("w").Should().BeLessThan(log.Entries.IndexOf("m1"));
    }

    [Fact]
    public async Task AwaitFromOffTheScheduler_RaisesNothing()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        var log = new Log();
        using (loop.Context.PauseLoop())
        {
            Medium(loop.Context, log, 2, "m1");
            PriorityTask work = loop.Context.InvokeAsync(() => { log.Add("w"); return Task.CompletedTask; }, level: 0);
            Task waiter = Task.Run(async () => await work); // a thread-pool waiter has no level to lend
            await Task.Delay(10);
            waiter.IsCompleted.Should().BeFalse();
        }

        loop.Context.WaitUntilParked();
        log.Entries.Should().Equal("m1", "w");
    }

    [Fact]
    public async Task DefaultPriorityTask_IsCompleted()
    {
        default(PriorityTask).IsCompleted.Should().BeTrue();
        default(PriorityTask).Task.Should().BeSameAs(Task.CompletedTask);
        (await default(PriorityTask<int>)).Should().Be(0);
    }

    [Fact]
    public async Task MovedItems_RunExactlyOnce_AndNothingIsLeftQueued()
    {
        const int Works = 50;
        int ran = 0;
        PrioritySchedulerSnapshot? after = null;
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        await loop.Context.RunOn(3, async () =>
        {
            var works = new PriorityTask[Works];
            for (int i = 0; i < Works; i++)
            {
                works[i] = loop.Context.InvokeAsync(
                    async () =>
                    {
                        Interlocked.Increment(ref ran);
                        await Yield();
                        Interlocked.Increment(ref ran);
                    },
                    level: i % 3);
            }

            foreach (PriorityTask work in works)
            {
                await work; // each raised while the others wait at their levels; some were raised by earlier ones already
            }

            await loop.Context.Yield(0); // the places the moves left behind have run (as nothing) by now
            after = loop.Context.GetSnapshot();
        }).WithTimeout("the works");

        ran.Should().Be(2 * Works);
        after!.TotalPending.Should().Be(0);
    }

    private static async Task OnLoop(int level, Func<PriorityContext, Task> body)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = Levels });
        await using var disposeLoop = loop.BoundedDisposal();
        await loop.Context.RunOn(level, () => body(loop.Context)).WithTimeout("the waiter");
        loop.Context.WaitUntilParked(); // the medium items and any stragglers have run
    }

    private static void Medium(PriorityContext context, Log log, int level, params string[] names)
    {
        foreach (string name in names)
        {
            context.GetSynchronizationContext(level).Post(_ => log.Add(name), null);
        }
    }

    private sealed class Log
    {
        private readonly ConcurrentQueue<string> _entries = new();

        public List<string> Entries => [.. _entries];

        public void Add(string entry) => _entries.Enqueue(entry);
    }
}
