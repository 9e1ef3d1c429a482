// PA0001, PA0003: these tests drive controllers with pool-completed awaits and with tasks they observe through the controller, not by awaiting.
#pragma warning disable PA0001, PA0003
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Controllers;

/// <summary>
/// <see cref="PriorityTaskController"/>: work started under it runs at its level, <see cref="PriorityTaskController.SetLevel"/> moves the
/// queued work (in its order), <see cref="PriorityTaskController.Cancel"/> drops it and reports each item. Every test queues a known mix
/// from inside one loop item, so the order it then runs in is decided by the scheduler alone.
/// </summary>
public sealed class PriorityTaskControllerTests
{
    private static PriorityContextOptions Options(int levels = 3) => new() { Levels = levels, DefaultLevel = 0, Name = "ctl" };

    [Fact]
    public void Callbacks_RunAtTheControllersLevel_WithItsSynchronizationContext()
    {
        var seen = new List<(int Level, SynchronizationContext? Context)>();
        PriorityTaskController? controller = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            controller = PriorityContext.Current!.CreateController(2);
            controller.Post(() => seen.Add((PriorityContext.CurrentLevel, SynchronizationContext.Current)));
            controller.SynchronizationContext.Post(_ => seen.Add((PriorityContext.CurrentLevel, SynchronizationContext.Current)), null);
            controller.Factory.StartNew(() => seen.Add((PriorityContext.CurrentLevel, SynchronizationContext.Current)));
        }, Options()), "PriorityContext.Run");

        seen.Should().HaveCount(3);
        seen.Should().OnlyContain(s => s.Level == 2 && ReferenceEquals(s.Context, controller!.SynchronizationContext));
        controller!.SynchronizationContext.Scheduler.Name.Should().Be("ctl");
    }

    [Fact]
    public void SetLevel_Up_MovesQueuedItemsAheadOfLowerLevels()
    {
        var log = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            PriorityTaskController controller = context.CreateController(0);
            controller.Post(() => log.Add("c1"));
            controller.Post(() => log.Add("c2"));
            context.GetSynchronizationContext(1).Post(_ => log.Add("p1"), null);
            controller.SetLevel(2);
            controller.Level.Should().Be(2);
        }, Options()), "PriorityContext.Run");

        log.Should().Equal("c1", "c2", "p1");
    }

    [Fact]
    public void SetLevel_Down_MovesQueuedItemsBehindHigherLevels_AndBehindWhatTheNewLevelAlreadyHolds()
    {
        var log = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            PriorityTaskController controller = context.CreateController(2);
            controller.Post(() => log.Add("c1"));
            controller.Post(() => log.Add("c2"));
            context.GetSynchronizationContext(1).Post(_ => log.Add("p1"), null);
            context.GetSynchronizationContext(0).Post(_ => log.Add("p0"), null);
            controller.SetLevel(0);
            context.GetSynchronizationContext(0).Post(_ => log.Add("p0-after"), null);
        }, Options()), "PriorityContext.Run");

        // One place in the FIFO of level 0, behind p0; after each item the controller goes to the back of its level again.
        log.Should().Equal("p1", "p0", "c1", "p0-after", "c2");
    }

    [Fact]
    public void SetLevel_ToTheSameLevel_KeepsTheItemsPlace()
    {
        var log = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            PriorityTaskController controller = context.CreateController(1);
            controller.Post(() => log.Add("c1"));
            context.GetSynchronizationContext(1).Post(_ => log.Add("p1"), null);
            controller.SetLevel(1);
        }, Options()), "PriorityContext.Run");

        log.Should().Equal("c1", "p1");
    }

    [Fact]
    public void Fifo_IsKept_AcrossManySetLevels_EvenFromInsideItsOwnItems()
    {
        const int Items = 200;
        var ran = new List<int>();
        var levels = new List<int>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            PriorityTaskController controller = context.CreateController(0);
            for (int i = 0; i < Items; i++)
            {
                int n = i;
                controller.Post(() =>
                {
                    ran.Add(n);
                    levels.Add(PriorityContext.CurrentLevel);
                    controller.SetLevel((n * 7) % 4); // moves the items still queued, from inside one of them
                    context.GetSynchronizationContext(n % 4).Post(_ => { }, null); // other work to interleave with
                });

                if (i % 10 == 0)
                {
                    controller.SetLevel(i % 4);
                }
            }
        }, Options(levels: 4)), "PriorityContext.Run");

        ran.Should().Equal(Enumerable.Range(0, Items), "a controller's items run in the order they were queued, whatever SetLevel does");
        levels.Skip(1).Should().Equal(Enumerable.Range(0, Items - 1).Select(n => (n * 7) % 4), "each item runs at the level set just before it");
    }

    [Fact]
    public void Cancel_DropsEveryQueuedItem_ReportsEachInOrder_AndLaterPostsToo()
    {
        var ran = new List<int>();
        var dropped = new List<WorkDroppedEventArgs>();
        long droppedCount = 0;
        PriorityTaskController? controller = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.WorkDropped += (_, e) => dropped.Add(e);
            controller = context.CreateController(1);
            for (int i = 0; i < 5; i++)
            {
                controller.Post(static s => throw new InvalidOperationException($"item {s} must not run"), i);
            }

            controller.PendingCount.Should().Be(5);
            controller.SetLevel(2); // leaves a stale activation at level 1 and a current one at 2: neither may run an item
            controller.Cancel();
            controller.IsCancelled.Should().BeTrue();
            controller.Token.IsCancellationRequested.Should().BeTrue();
            controller.PendingCount.Should().Be(0);
            controller.Post(_ => ran.Add(99), 5);
            controller.SynchronizationContext.Post(_ => ran.Add(100), 6);
            controller.Cancel(); // again: nothing more to drop
            context.GetSynchronizationContext(0).Post(_ => droppedCount = context.GetSnapshot().DroppedCount, null);
        }, Options()), "PriorityContext.Run");

        ran.Should().BeEmpty();
        dropped.Select(e => (int)e.State!).Should().Equal(0, 1, 2, 3, 4, 5, 6);
        dropped.Should().OnlyContain(e => e.Reason == DropReason.Cancelled && e.Level == 2);
        droppedCount.Should().Be(7, "every dropped item is counted");
    }

    [Fact]
    public void Continuations_OfAsyncMethodsStartedUnderIt_FollowSetLevel()
    {
        var log = new List<string>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            PriorityTaskController controller = context.CreateController(0);
            var gate = new TaskCompletionSource(); // continuations run synchronously: the await posts to the captured context
            Task work = controller.Run(async () =>
            {
                log.Add($"start@{PriorityContext.CurrentLevel}");
                await gate.Task;
                log.Add($"resumed@{PriorityContext.CurrentLevel}");
                await Task.Yield(); // through the controller's SynchronizationContext again
                log.Add($"yielded@{PriorityContext.CurrentLevel}");
                SynchronizationContext.Current.Should().BeSameAs(controller.SynchronizationContext);
            });

            await Priority.Yield(); // let the work start (level 0)
            log.Should().Equal("start@0");
            context.GetSynchronizationContext(1).Post(_ => log.Add("p1"), null);
            controller.SetLevel(2);
            gate.SetResult(); // the continuation is queued through the controller, at level 2 now
            log.Add("entry");
            await work;
        }, Options()), "PriorityContext.Run");

        log.Should().Equal("start@0", "entry", "resumed@2", "yielded@2", "p1");
    }

    [Fact]
    public void PriorityDelay_InsideItsWork_ResumesThroughTheController_AtItsLevelThen()
    {
        int level = -1;
        SynchronizationContext? current = null;
        PriorityTaskController? controller = null;
        // A clock the test moves: on the system clock a loaded machine could let the 1 ms pass before SetLevel (it did, once).
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider();
        PriorityContextOptions options = Options();
        options.TimeProvider = clock;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            controller = PriorityContext.Current!.CreateController(1);
            Task work = controller.Run(async () =>
            {
                await Priority.Delay(TimeSpan.FromMilliseconds(1));
                level = PriorityContext.CurrentLevel;
                current = SynchronizationContext.Current;
            });
            await Priority.Yield(); // the work starts (level 1) and waits on the loop timer
            controller.SetLevel(2);
            clock.Advance(TimeSpan.FromMilliseconds(1)); // now the delay is due: it fires once this item ends
            await work;
        }, options), "PriorityContext.Run");

        level.Should().Be(2);
        current.Should().BeSameAs(controller!.SynchronizationContext);
    }

    [Fact]
    public void Cancel_CancelsRunTasks_AndStopsHoldingTheLoopForWorkThatCanNoLongerResume()
    {
        Task? queued = null;
        Task? running = null;
        Task<int>? typed = null;
        var dropped = new List<WorkDroppedEventArgs>();
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.WorkDropped += (_, e) => dropped.Add(e);
            PriorityTaskController controller = context.CreateController(1);
            var never = new TaskCompletionSource();
            running = controller.Run(async () => await never.Task); // pending: holds the loop through the controller
            await Priority.Yield(); // runs it
            queued = controller.Run(() => Task.CompletedTask);
            typed = controller.Run(() => Task.FromResult(1));
            controller.Cancel();
            never.SetResult(); // its continuation is posted under a cancelled controller: dropped, reported
        }, Options()), "PriorityContext.Run"); // returns: the cancelled controller no longer holds the loop

        queued!.IsCanceled.Should().BeTrue();
        typed!.IsCanceled.Should().BeTrue();
        running!.IsCanceled.Should().BeTrue();
        dropped.Should().HaveCount(3).And.OnlyContain(e => e.Reason == DropReason.Cancelled);
    }

    [Fact]
    public void AsyncVoid_UnderACancelledController_DoesNotKeepTheLoopAlive()
    {
        bool resumed = false;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityTaskController controller = PriorityContext.Current!.CreateController(1);
            var never = new TaskCompletionSource();
            controller.Post(async () =>
            {
                await never.Task;
                resumed = true;
            });
            await Priority.Yield();
            controller.Cancel();
            never.SetResult();
        }, Options()), "PriorityContext.Run");

        resumed.Should().BeFalse();
    }

    [Fact]
    public void Run_CompletesWithTheWorksResult_AndKeepsTheLoopAliveMeanwhile()
    {
        int result = 0;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityTaskController controller = PriorityContext.Current!.CreateController(2);
            _ = controller.Run(async () =>
            {
                await Task.Delay(1).ConfigureAwait(false); // off the loop: only the hold keeps the loop waiting
                await controller.Run(async () =>
                {
                    await Task.Yield();
                    return 21;
                }).Task.ContinueWith(t => result = t.Result * 2, TaskScheduler.Default);
            });
        }, Options()), "PriorityContext.Run");

        result.Should().Be(42);
    }

    [Fact]
    public async Task Send_FromAnotherThread_RunsUnderTheController()
    {
        var loop = new PriorityContextThread(Options());
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityTaskController controller = loop.Context.CreateController(2);
        int level = -1;
        SynchronizationContext? current = null;
        await Task.Run(() => controller.SynchronizationContext.Send(_ =>
        {
            level = PriorityContext.CurrentLevel;
            current = SynchronizationContext.Current;
        }, null)).WithTimeout("the Send");

        level.Should().Be(2);
        current.Should().BeSameAs(controller.SynchronizationContext);
    }

    [Fact]
    public async Task Send_FromAnotherThread_UnderACancelledController_ThrowsOperationCanceled_AndDoesNotHang()
    {
        var loop = new PriorityContextThread(Options());
        await using var disposeLoop = loop.BoundedDisposal();
        PriorityTaskController controller = loop.Context.CreateController(1);
        controller.Cancel();
        bool ran = false;
        Func<Task> send = () => Task.Run(() => controller.SynchronizationContext.Send(_ => ran = true, null)).WithTimeout("the Send");
        (await send.Should().ThrowAsync<OperationCanceledException>()).Which.CancellationToken.Should().Be(controller.Token);
        ran.Should().BeFalse();
    }

    [Fact]
    public void ContextFault_DropsTheControllersQueuedItems_WithTheContextsReason()
    {
        var dropped = new List<WorkDroppedEventArgs>();
        Action run = () => TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.WorkDropped += (_, e) => dropped.Add(e);
            PriorityTaskController controller = context.CreateController(0);
            controller.Post(_ => { }, "a");
            controller.Post(_ => { }, "b");
            context.GetSynchronizationContext(2).Post(_ => throw new InvalidOperationException("boom"), null);
        }, Options()), "PriorityContext.Run");

        run.Should().Throw<InvalidOperationException>().WithMessage("boom");
        dropped.Select(e => e.State).Should().Equal("a", "b");
        dropped.Should().OnlyContain(e => e.Reason == DropReason.AbandonedAfterFault && e.Level == 0);
    }

    [Fact]
    public void AfterTheContextFinished_PostsAreDroppedAndReported_AndEverythingElseThrowsObjectDisposed()
    {
        PriorityContext? finished = null;
        PriorityTaskController? controller = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            finished = PriorityContext.Current!;
            controller = finished.CreateController(1);
        }, Options()), "PriorityContext.Run");

        var dropped = new List<WorkDroppedEventArgs>();
        finished!.WorkDropped += (_, e) => dropped.Add(e);
        controller!.Post(_ => { }, "late");
        controller.SynchronizationContext.Post(_ => { }, "late2");
        dropped.Select(e => (e.State, e.Reason)).Should().Equal(("late", DropReason.PostedAfterCompletion), ("late2", DropReason.PostedAfterCompletion));
        finished.GetSnapshot().DroppedCount.Should().Be(2);

        controller.Invoking(c => c.SetLevel(2)).Should().Throw<ObjectDisposedException>().Which.Message.Should().Contain("'ctl'");
        finished.Invoking(c => c.CreateController(0)).Should().Throw<ObjectDisposedException>().Which.ObjectName.Should().Be("ctl");
        FluentActions.Invoking(() => new PriorityTaskController(finished, 0)).Should().Throw<ObjectDisposedException>();
        controller.Invoking(c => c.SynchronizationContext.Send(_ => { }, null)).Should().Throw<ObjectDisposedException>();
        controller.Run(() => Task.CompletedTask).Task.Exception!.InnerException.Should().BeOfType<ObjectDisposedException>();
        FluentActions.Invoking(() => { controller.Factory.StartNew(() => { }); }).Should().Throw<TaskSchedulerException>()
            .WithInnerException<ObjectDisposedException>();
        controller.Cancel(); // nothing queued: does nothing, does not throw
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(3)]
    [InlineData(int.MaxValue)]
    public void BadLevel_ThrowsArgumentOutOfRange_NamingTheValueAndTheRange(int level)
    {
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            foreach (Action act in new Action[] { () => context.CreateController(level), () => _ = new PriorityTaskController(context, level), () => context.CreateController(0).SetLevel(level) })
            {
                act.Should().Throw<ArgumentOutOfRangeException>()
                    .Where(e => e.ParamName == "level" && Equals(e.ActualValue, level) && e.Message.Contains("between 0 and 2"));
            }
        }, Options()), "PriorityContext.Run");
    }

    [Fact]
    public void NullArguments_Throw()
    {
        FluentActions.Invoking(() => new PriorityTaskController(null!, 0)).Should().Throw<ArgumentNullException>().WithParameterName("context");
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityTaskController controller = PriorityContext.Current!.CreateController(0);
            controller.Invoking(c => c.Post(null!, null)).Should().Throw<ArgumentNullException>();
            controller.Invoking(c => c.Post((Action)null!)).Should().Throw<ArgumentNullException>();
            FluentActions.Invoking(() => { controller.Run(null!); }).Should().Throw<ArgumentNullException>();
            controller.Invoking(c => c.SynchronizationContext.Post(null!, null)).Should().Throw<ArgumentNullException>();
        }, Options()), "PriorityContext.Run");
    }

    [Fact]
    public void Checkpoint_UnderAController_YieldsIntoTheController_SoSetLevelMovesTheRestOfTheMethod()
    {
        var log = new List<string>();
        PriorityTaskController? controller = null;
        SynchronizationContext? resumedUnder = null;
        Task? work = null;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(() =>
        {
            PriorityContext context = PriorityContext.Current!;
            controller = context.CreateController(0);
            work = controller.Run(async () =>
            {
                context.GetSynchronizationContext(2).Post(_ => { log.Add("urgent"); controller.SetLevel(1); }, null);
                context.GetSynchronizationContext(0).Post(_ => log.Add("level 0 item"), null);
                await PriorityAsync.Priority.Checkpoint(); // yields: work waits at level 2
                resumedUnder = SynchronizationContext.Current;
                log.Add($"resumed at {PriorityContext.CurrentLevel}");
            });
        }, Options()), "PriorityContext.Run");

        work!.IsCompletedSuccessfully.Should().BeTrue();
        resumedUnder.Should().BeSameAs(controller!.SynchronizationContext, "a checkpoint must not take the method out of its controller");

        // Queued in the controller, the rest of the method moved with SetLevel(1) ahead of the plain level-0 item queued before it.
        log.Should().Equal("urgent", "resumed at 1", "level 0 item");
    }
}
