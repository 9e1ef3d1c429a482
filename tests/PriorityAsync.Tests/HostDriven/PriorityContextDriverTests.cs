using PriorityAsync.Tests.Infrastructure;
using static PriorityAsync.Tests.HostDriven.HostThread;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>A context its host drives: binding, other threads' posts, telling an idle host, Send and Wait on the host's thread, the
/// end (Complete, Dispose from everywhere, faults), and the calls that are refused.</summary>
public class PriorityContextDriverTests
{
    private static readonly SendOrPostCallback s_noop = static _ => { };

    // ---- Binding -------------------------------------------------------------------------------------------------------------------

    [Fact]
    public void AttachToCurrentThread_InstallsTheDefaultLevelAndGivesTheFormerContextBackAtTheEnd()
    {
        TestTimeout.OnOwnThread(
            () =>
            {
                var former = new SynchronizationContext();
                SynchronizationContext.SetSynchronizationContext(former);
                PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3, DefaultLevel = 1 });

                SynchronizationContext.Current.Should().BeSameAs(driver.Context.GetSynchronizationContext(1));
                PriorityContext.Current.Should().BeSameAs(driver.Context);
                driver.ManagedThreadId.Should().Be(Environment.CurrentManagedThreadId);
                driver.Context.State.Should().Be(PrioritySchedulerState.Running);

                driver.Dispose();

                SynchronizationContext.Current.Should().BeSameAs(former);
                driver.Context.State.Should().Be(PrioritySchedulerState.Completed);
                driver.Completion.IsCompletedSuccessfully.Should().BeTrue();
            },
            "host");
    }

    [Fact]
    public void AwaitsInTheHostsOwnCode_ComeBackInTheNextDrainAtTheirLevelAndLeaveTheHostsLevelAlone()
    {
        HostThread.Run(host =>
        {
            var seen = new List<string>();

            async Task HostCode()
            {
                await Task.Yield();
                seen.Add($"after Task.Yield: level {Priority.CurrentLevel}, in a drain");
                await host.Context.Prioritize(2);
                seen.Add($"after Prioritize(2): level {Priority.CurrentLevel}");
            }

            async Task Outside()
            {
                await host.Context.Prioritize(2); // the host's own code, outside a drain: always queued
                seen.Add($"outside: level {Priority.CurrentLevel}");
            }

            Task first = HostCode();
            Task second = Outside();

            seen.Should().BeEmpty("outside a drain nothing of the context runs on the host's thread");
            SynchronizationContext.Current.Should().BeSameAs(host.Context.GetSynchronizationContext(0), "the host's code stays at its level");

            host.Driver.Drain();

            seen.Should().Equal(
                "outside: level 2",
                "after Task.Yield: level 0, in a drain",
                "after Prioritize(2): level 2");
            first.IsCompletedSuccessfully.Should().BeTrue();
            second.IsCompletedSuccessfully.Should().BeTrue();
            SynchronizationContext.Current.Should().BeSameAs(host.Context.GetSynchronizationContext(0), "a drain gives the host's context back");
        });
    }

    [Fact]
    public void AttachToCurrentThread_OnAThreadThatAlreadyDrivesOne_Throws()
    {
        HostThread.Run(host =>
        {
            Action again = () => PriorityContext.AttachToCurrentThread();
            Action run = () => PriorityContext.Run(() => { });

            again.Should().Throw<InvalidOperationException>().WithMessage("*already drives the PriorityContext 'host' for its host*");
            run.Should().Throw<InvalidOperationException>().WithMessage("*already drives*");
            SynchronizationContext.Current.Should().BeSameAs(host.Context.GetSynchronizationContext(0));
        });
    }

    [Fact]
    public void AttachToCurrentThread_InsideTheLoopOfRun_Throws()
    {
        TestTimeout.OnOwnThread(
            () =>
            {
                Exception? thrown = null;
                PriorityContext.Run(() => thrown = Record.Exception(() => PriorityContext.AttachToCurrentThread()));

                thrown.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("already running the loop");
            },
            "loop");
    }

    // ---- Bad calls -------------------------------------------------------------------------------------------------------------------

    [Theory]
    [InlineData(-1, 0, "budget")]
    [InlineData(2 * 24 * 60 * 60 * 1000.0, 0, "budget")]
    [InlineData(1, 3, "alwaysDrainFromLevel")]
    [InlineData(1, -1, "alwaysDrainFromLevel")]
    public void Drain_BadArguments_ThrowNamingTheValueAndTheRange(double budgetMs, int alwaysDrainFromLevel, string parameter)
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(0, "queued", log);

            Action drain = () => host.Driver.Drain(Ms(budgetMs), alwaysDrainFromLevel);

            ArgumentOutOfRangeException thrown = drain.Should().Throw<ArgumentOutOfRangeException>().Which;
            thrown.ParamName.Should().Be(parameter);
            thrown.Message.Should().Contain(parameter == "budget" ? "between 00:00:00 and 1.00:00:00" : "between 0 and 2");
            log.Should().BeEmpty();
            host.Driver.Drain().ItemsRun.Should().Be(1, "nothing was lost");
        });
    }

    [Fact]
    public void Drain_FromAnotherThread_ThrowsAndRunsNothing()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(0, "queued", log);

            Exception? thrown = null;
            TestTimeout.OnOwnThread(() => thrown = Record.Exception(() => host.Driver.Drain(Ms(1))), "another thread");

            thrown.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain($"attached to thread {host.Driver.ManagedThreadId}");
            log.Should().BeEmpty();
            host.Driver.Drain().ItemsRun.Should().Be(1);
            log.Should().Equal("queued");
        });
    }

    [Fact]
    public void Drain_FromInsideAnItem_ThrowsThereAndTheOuterDrainLosesNothing()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            Exception? thrown = null;
            bool? drainingInside = null;
            host.Post(1, () =>
            {
                log.Add("outer");
                drainingInside = host.Driver.IsDraining;
                thrown = Record.Exception(() => host.Driver.Drain());
            });
            host.PostWork(0, "after", log);

            PriorityDrainResult result = host.Driver.Drain();

            thrown.Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("from inside an item");
            drainingInside.Should().BeTrue();
            host.Driver.IsDraining.Should().BeFalse();
            log.Should().Equal("outer", "after");
            result.ItemsRun.Should().Be(2);
        });
    }

    // ---- Other threads and telling the host ---------------------------------------------------------------------------------------

    [Fact]
    public void Drain_WhileOtherThreadsPost_RunsEveryItemOnceInEachProducersOrder()
    {
        const int Producers = 3;
        const int PerProducer = 5_000;
        HostThread.Run(host =>
        {
            var seen = new List<(int Producer, int Sequence)>();
            var producers = new Thread[Producers];
            for (int p = 0; p < Producers; p++)
            {
                int producer = p;
                producers[p] = new Thread(() =>
                {
                    PrioritySynchronizationContext target = host.Context.GetSynchronizationContext(producer % 3);
                    for (int i = 0; i < PerProducer; i++)
                    {
                        target.Post(static state => { var (list, item) = ((List<(int, int)>, (int, int)))state!; list.Add(item); }, (seen, (producer, i)));
                    }
                }) { IsBackground = true };
                producers[p].Start();
            }

            DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
            while (seen.Count < Producers * PerProducer)
            {
                host.Driver.Drain(Ms(1));
                DateTime.UtcNow.Should().BeBefore(deadline, "every item posted must be run by a drain");
            }

            foreach (Thread t in producers)
            {
                t.JoinOrFail("a producer");
            }

            host.Driver.Drain().ItemsRun.Should().Be(0);
            for (int p = 0; p < Producers; p++)
            {
                seen.Where(s => s.Producer == p).Select(s => s.Sequence).Should().Equal(Enumerable.Range(0, PerProducer));
            }
        });
    }

    [Fact]
    public void WorkAvailable_PostsWhileTheHostIsIdle_TellTheHostOncePerIdlePeriod()
    {
        int told = 0;
        HostThread.Run(
            host =>
            {
                TestTimeout.OnOwnThread(() => host.Post(0, () => { }), "a producer");
                told.Should().Be(1, "the first post after the host went idle tells it");
                TestTimeout.OnOwnThread(() => host.Post(0, () => { }), "a producer");
                told.Should().Be(1, "the host was told already");

                host.Driver.Drain().Should().Be(new PriorityDrainResult(2, WorkRemains: false, BudgetSpent: false, TimeSpan.Zero));

                host.Post(1, () => { }); // the host's own post, outside a drain, is a producer's
                told.Should().Be(2);
                host.Driver.Drain().ItemsRun.Should().Be(1);
                host.Driver.Drain().ItemsRun.Should().Be(0);
                told.Should().Be(2, "a drain tells nobody");
            },
            workAvailable: () => Interlocked.Increment(ref told));
    }

    [Fact]
    public void WorkAvailable_DrainLeavingWorkBehind_IsNotCalledTheResultSaysSo()
    {
        int told = 0;
        HostThread.Run(
            host =>
            {
                var log = new List<string>();
                host.PostWork(0, "a", log, milliseconds: 1);
                host.PostWork(0, "b", log, milliseconds: 1);
                told.Should().Be(1);

                host.Driver.Drain(Ms(0.5)).WorkRemains.Should().BeTrue();
                TestTimeout.OnOwnThread(() => host.Post(0, () => { }), "a producer");

                told.Should().Be(1, "the host knows work remains: it drains again without being told");
                host.Driver.Drain().ItemsRun.Should().Be(2);
            },
            workAvailable: () => Interlocked.Increment(ref told));
    }

    [Fact]
    public void WorkAvailable_LoopTimerComesDueWhileTheHostIsIdle_TellsTheHostFromTheLibrarysThreadNotThePool()
    {
        using var told = new SemaphoreSlim(0);
        string? teller = null;
        HostThread.Run(
            host =>
            {
                int fired = 0;
                using ITimer timer = host.Context.TimeProvider.CreateTimer(_ => fired++, null, Ms(10), Timeout.InfiniteTimeSpan);
                host.Driver.Drain().ItemsRun.Should().Be(0);

                host.Clock.Advance(Ms(10));

                told.Wait(TestTimeout.Unexpected).Should().BeTrue("the due timer tells the idle host");
                fired.Should().Be(0, "the timer fires in a drain, on the host's thread");
                host.Driver.Drain().ItemsRun.Should().Be(1);
                fired.Should().Be(1);
                teller.Should().Be("PriorityAsync host wake", "a timer's wake-up comes under a lock: the library's own thread tells the host");
            },
            workAvailable: () =>
            {
                teller = Thread.CurrentThread.IsThreadPoolThread ? "a thread-pool thread" : Thread.CurrentThread.Name;
                told.Release();
            });
    }

    // ---- Send and Wait on the host's thread ---------------------------------------------------------------------------------------

    [Fact]
    public void Send_OnTheHostsThreadOutsideADrain_RunsInlineAtItsLevel()
    {
        HostThread.Run(host =>
        {
            int? level = null;
            int? thread = null;

            host.Context.GetSynchronizationContext(2).Send(_ => (level, thread) = (Priority.CurrentLevel, Environment.CurrentManagedThreadId), null);

            (level, thread).Should().Be((2, host.Driver.ManagedThreadId));
            SynchronizationContext.Current.Should().BeSameAs(host.Context.GetSynchronizationContext(0));
        });
    }

    [Fact]
    public void Send_FromAnotherThread_BlocksUntilTheHostsDrainRunsIt()
    {
        HostThread.Run(host =>
        {
            int? ranOn = null;
            Task sender = Task.Run(() => host.Context.GetSynchronizationContext(1).Send(_ => ranOn = Environment.CurrentManagedThreadId, null));

            DateTime deadline = DateTime.UtcNow + TestTimeout.Unexpected;
            while (!sender.IsCompleted)
            {
                host.Driver.Drain();
                Thread.Yield();
                DateTime.UtcNow.Should().BeBefore(deadline);
            }

            sender.WaitOrFail("the Send");
            ranOn.Should().Be(host.Driver.ManagedThreadId);
        });
    }

    [Fact]
    public void Wait_OnTheHostsThreadForWorkThatNeedsADrain_BlocksAndTheStallWatchdogReportsIt()
    {
        using var release = new CancellationTokenSource();
        StallDetectedEventArgs? report = null;
        HostThread.Run(
            host =>
            {
                host.Context.StallDetected += (_, e) =>
                {
                    report = e;
                    release.Cancel();
                };
                Task work = host.Context.InvokeAsync(() => Task.CompletedTask, level: 1);

#pragma warning disable PA0002 // the mistake under test: a blocking wait on the thread that must drain the work
                Action wait = () => work.Wait(release.Token);
#pragma warning restore PA0002

                wait.Should().Throw<OperationCanceledException>("the wait can only end by the watchdog's report: the work needs a drain");
                report.Should().NotBeNull();
                report!.Level.Should().Be(1);
                work.IsCompleted.Should().BeFalse();
                host.Driver.Drain().ItemsRun.Should().Be(1);
                work.IsCompletedSuccessfully.Should().BeTrue();
            },
            options => options.StallTimeout = PrioritySchedulerOptions.MinStallTimeout);
    }

    // ---- The end ---------------------------------------------------------------------------------------------------------------------

    [Fact]
    public void Dispose_OnTheHostsThread_DropsWhatIsQueuedReportsItAndLaterPostsAndDrains()
    {
        HostThread.Run(host =>
        {
            var dropped = new List<(int Level, DropReason Reason)>();
            host.Context.WorkDropped += (_, e) => dropped.Add((e.Level, e.Reason));
            var log = new List<string>();
            host.PostWork(0, "a", log);
            host.PostWork(2, "b", log);

            host.Driver.Dispose();

            dropped.Should().Equal((2, DropReason.PostedAfterCompletion), (0, DropReason.PostedAfterCompletion));
            host.Driver.Completion.IsCompletedSuccessfully.Should().BeTrue();
            host.Context.GetSynchronizationContext(1).Post(s_noop, null);
            dropped.Should().HaveCount(3, "a post after the end is dropped and reported, as on the loop");
            host.Driver.Drain(Ms(1)).Should().Be(default(PriorityDrainResult), "after the end a drain does nothing");
            host.Driver.Dispose();
            host.Driver.Complete();
            log.Should().BeEmpty();
            host.Context.GetSnapshot().DroppedCount.Should().Be(3);
        });
    }

    [Fact]
    public void Dispose_FromAnItemOfADrain_StartsNoItemAfterItAndTheDrainEndsTheContext()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            var dropped = new List<string>();
            host.Context.WorkDropped += (_, _) => dropped.Add("dropped");
            host.Post(2, () =>
            {
                log.Add("disposing");
                host.Driver.Dispose();
                host.Context.State.Should().Be(PrioritySchedulerState.Running, "the item is still running: the drain ends the context");
            });
            host.PostWork(2, "after", log);
            host.PostWork(0, "below", log);

            PriorityDrainResult result = host.Driver.Drain();

            log.Should().Equal("disposing");
            dropped.Should().HaveCount(2);
            result.Should().Be(new PriorityDrainResult(1, WorkRemains: false, BudgetSpent: false, TimeSpan.Zero));
            host.Driver.Completion.IsCompletedSuccessfully.Should().BeTrue();
            SynchronizationContext.Current.Should().BeNull("the thread got back what it had before the context was attached");
        });
    }

    [Fact]
    public void Dispose_FromAnotherThreadDuringADrain_StartsNoItemAfterTheRequestIsSeen()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            using var entered = new ManualResetEventSlim();
            using var release = new ManualResetEventSlim();
            host.Post(1, () =>
            {
                log.Add("running");
                entered.Set();
                release.WaitOrFail("the other thread's Dispose");
            });
            host.PostWork(1, "after", log);

            var other = new Thread(() =>
            {
                entered.WaitOrFail("the drain's first item");
                host.Driver.Dispose(); // a request: the host's thread ends the context
                release.Set();
            }) { IsBackground = true };
            other.Start();

            host.Driver.Drain();
            other.JoinOrFail("the disposing thread");

            log.Should().Equal("running");
            host.Context.State.Should().Be(PrioritySchedulerState.Completed);
            host.Context.GetSnapshot().DroppedCount.Should().Be(1);
        });
    }

    [Fact]
    public void Dispose_FromAnotherThreadWhileIdle_TellsTheHostAndItsNextDrainEndsTheContext()
    {
        using var told = new SemaphoreSlim(0);
        HostThread.Run(
            host =>
            {
                TestTimeout.OnOwnThread(() => host.Driver.Dispose(), "another thread");

                told.Wait(TestTimeout.Unexpected).Should().BeTrue();
                host.Context.State.Should().Be(PrioritySchedulerState.Running, "only the host's thread ends it");
                host.Driver.Drain().ItemsRun.Should().Be(0);
                host.Context.State.Should().Be(PrioritySchedulerState.Completed);
            },
            workAvailable: () => told.Release());
    }

    [Fact]
    public void DisposeAsync_FromAnotherThread_CompletesOnceTheHostsNextDrainHasEndedTheContext()
    {
        HostThread.Run(host =>
        {
            var log = new List<string>();
            host.PostWork(1, "queued", log);
            Task disposal = Task.CompletedTask;
            TestTimeout.OnOwnThread(() => disposal = host.Driver.DisposeAsync().AsTask(), "another thread");

            disposal.IsCompleted.Should().BeFalse("only the host's thread ends the context: the request waits for its drain");
            host.Driver.Drain();

            disposal.IsCompletedSuccessfully.Should().BeTrue("the drain ended the context");
            log.Should().BeEmpty("an end that was requested starts no item");
            host.Context.GetSnapshot().DroppedCount.Should().Be(1);
        });
    }

    [Fact]
    public void DisposeAsync_OnTheHostsThreadOutsideADrain_EndsTheContextInTheCall()
    {
        HostThread.Run(host =>
        {
            Task disposal = host.Driver.DisposeAsync().AsTask();

            disposal.IsCompletedSuccessfully.Should().BeTrue();
            host.Context.State.Should().Be(PrioritySchedulerState.Completed);
            host.Driver.DisposeAsync().AsTask().IsCompletedSuccessfully.Should().BeTrue("idempotent");
        });
    }

    [Fact]
    public void DisposeAsync_FromAnItemOfADrain_ReturnsACompletedTaskAndTheDrainEndsTheContext()
    {
        HostThread.Run(host =>
        {
            Task disposal = Task.FromException(new InvalidOperationException("not called"));
            Task invoked = host.Context.InvokeAsync(async () =>
            {
                disposal = host.Driver.DisposeAsync().AsTask(); // a request: the drain carries it out before its next item
                await Task.Yield();
            });

            host.Driver.Drain();

            disposal.IsCompletedSuccessfully.Should().BeTrue("an item cannot wait for its own drain");
            host.Context.State.Should().Be(PrioritySchedulerState.Completed);
            invoked.Exception!.InnerException.Should().BeOfType<ObjectDisposedException>("the end dropped the work's continuation and completed its task");
        });
    }

    [Fact]
    public void DisposeAsync_AfterAFault_CarriesTheFault()
    {
        var boom = new InvalidOperationException("boom");
        HostThread.Run(host =>
        {
            host.Post(0, () => throw boom);
            FluentActions.Invoking(() => host.Driver.Drain()).Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(boom);

            Func<Task> disposal = () => host.Driver.DisposeAsync().AsTask();

            disposal.Should().ThrowAsync<InvalidOperationException>().GetAwaiter().GetResult().Which.Should().BeSameAs(boom);
        });
    }

    [Fact]
    public void Dispose_PendingAsyncMethod_ItsAwaitThrowsObjectDisposedException()
    {
        HostThread.Run(host =>
        {
            bool resumed = false;

            async Task Pending()
            {
                await host.Context.Yield(1);
                resumed = true;
            }

            Task pending = Pending();
            host.Driver.Dispose();

            Action result = () => pending.WaitOrFail("the dropped continuation");
            result.Should().Throw<ObjectDisposedException>();
            resumed.Should().BeFalse();
        });
    }

    [Fact]
    public void Complete_ThenDrains_EndTheContextOnceTheAsyncVoidWorkItWaitsForIsDone()
    {
        HostThread.Run(host =>
        {
            var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            bool done = false;

            async void Background()
            {
                await gate.Task;
                done = true;
            }

            Background(); // started on the host's thread: counted by the context, as on the loop
            host.Driver.Complete();
            host.Driver.Drain();
            host.Context.State.Should().Be(PrioritySchedulerState.Running, "an async void method is outstanding");

            TestTimeout.OnOwnThread(gate.SetResult, "the completing thread");
            host.Driver.Drain().ItemsRun.Should().Be(1);

            done.Should().BeTrue();
            host.Context.State.Should().Be(PrioritySchedulerState.Completed, "the drain that ran the last operation ended the context");
            host.Driver.Completion.IsCompletedSuccessfully.Should().BeTrue();
        });
    }

    [Fact]
    public void Drain_ItemThrowsAndNoHandlerHandlesIt_RethrowsFaultsTheContextAndDropsTheRest()
    {
        HostThread.Run(host =>
        {
            var dropped = new List<DropReason>();
            host.Context.WorkDropped += (_, e) => dropped.Add(e.Reason);
            var log = new List<string>();
            host.Post(1, () => throw new InvalidOperationException("boom"));
            host.PostWork(0, "after", log);

            Action drain = () => host.Driver.Drain();

            drain.Should().Throw<InvalidOperationException>().WithMessage("boom");
            host.Context.State.Should().Be(PrioritySchedulerState.Faulted);
            dropped.Should().Equal(DropReason.AbandonedAfterFault);
            log.Should().BeEmpty();
            host.Driver.Completion.IsFaulted.Should().BeTrue();
            host.Driver.Drain().Should().Be(default(PriorityDrainResult));
            SynchronizationContext.Current.Should().BeNull();
        });
    }

    [Fact]
    public void Drain_ItemThrowsAndAHandlerHandlesIt_GoesOn()
    {
        HostThread.Run(host =>
        {
            host.Context.UnhandledException += (_, e) => e.Handled = true;
            var log = new List<string>();
            host.Post(1, () => throw new InvalidOperationException("handled"));
            host.PostWork(0, "after", log);

            host.Driver.Drain().ItemsRun.Should().Be(2);

            log.Should().Equal("after");
            host.Context.State.Should().Be(PrioritySchedulerState.Running);
        });
    }
}
