using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Faults;

/// <summary>
/// Every exception surfaces exactly where the docs say, exactly once, unwrapped (the same instance that was thrown):
/// <list type="table">
/// <item><term>posted callback / async void</term><description><see cref="PriorityContext.UnhandledException"/>; if not handled, the
/// context faults: <c>Run</c> rethrows it, <see cref="PriorityContextThread.Completion"/> faults with it.</description></item>
/// <item><term>cross-thread Send</term><description>rethrown on the sending thread; not an unhandled exception.</description></item>
/// <item><term>Send on the loop thread</term><description>propagates to the caller (inline call).</description></item>
/// <item><term>task on a level's scheduler</term><description>captured in the Task; not an unhandled exception.</description></item>
/// <item><term>the entry point of Run</term><description>rethrown by Run; not an unhandled exception.</description></item>
/// </list>
/// </summary>
public sealed class ExceptionRoutingTests
{
    [Fact]
    public async Task PostedCallbackThrows_Handled_RaisedOnceUnwrappedWithLevel_LoopKeepsRunning()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var raised = new ConcurrentQueue<PriorityUnhandledExceptionEventArgs>();
        loop.UnhandledException += (_, e) =>
        {
            raised.Enqueue(e);
            e.Handled = true;
        };
        var thrown = new InvalidOperationException("boom");

        loop.Context.GetSynchronizationContext(2).Post(_ => throw thrown, null);
        int after = await loop.Context.GetTaskFactory(0).StartNew(() => 42).WithTimeout("an item after the throwing one");
        await loop.DisposeAsync().AsTask().WithTimeout("dispose");

        after.Should().Be(42, "a handled exception must not stop the loop");
        raised.Should().ContainSingle();
        raised.Single().Exception.Should().BeSameAs(thrown, "unwrapped: the instance that was thrown");
        raised.Single().Level.Should().Be(2);
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Fact]
    public async Task AsyncVoidThrowsAfterAwait_Handled_RaisedOnceAtItsLevel_LoopKeepsRunning()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        var raised = new ConcurrentQueue<PriorityUnhandledExceptionEventArgs>();
        loop.UnhandledException += (_, e) =>
        {
            raised.Enqueue(e);
            e.Handled = true;
        };
        var thrown = new InvalidOperationException("async void");

        loop.Context.GetSynchronizationContext(1).Post(_ => ThrowAfterYield(thrown), null);

        // The async void is an outstanding operation: Dispose (graceful) waits for it, so the handler has run when it returns.
        await loop.DisposeAsync().AsTask().WithTimeout("dispose after the async void finished");
        raised.Should().ContainSingle();
        raised.Single().Exception.Should().BeSameAs(thrown);
        raised.Single().Level.Should().Be(1, "async void posts its exception to the context it started on");
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Fact]
    public async Task AsyncVoidThrows_NotHandled_CompletionFaultsWithSameInstance_QueuedWorkDroppedAsAbandoned()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        int raisedCount = 0;
        loop.UnhandledException += (_, _) => Interlocked.Increment(ref raisedCount); // sees it, does not handle it
        var dropped = new ConcurrentQueue<WorkDroppedEventArgs>();
        loop.Context.WorkDropped += (_, e) => dropped.Enqueue(e);
        var thrown = new InvalidOperationException("unhandled");
        int ranAfter = 0;

        loop.Context.GetSynchronizationContext(2).Post(
            _ =>
            {
                // Queued behind the throw (same level, FIFO): the fault stops the loop before they run.
                ThrowAfterYield(thrown);
                for (int i = 0; i < 3; i++)
                {
                    loop.Context.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ranAfter), null);
                }
            },
            null);

        Func<Task> completion = () => loop.Completion.WithTimeout("the faulted completion");
        (await completion.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(thrown);
        Action dispose = loop.Dispose;
        dispose.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(thrown, "Dispose rethrows it unwrapped");

        Volatile.Read(ref raisedCount).Should().Be(1);
        Volatile.Read(ref ranAfter).Should().Be(0);
        dropped.Should().HaveCount(3).And.OnlyContain(d => d.Reason == DropReason.AbandonedAfterFault && d.Level == 0);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(3);
        loop.Context.State.Should().Be(PrioritySchedulerState.Faulted);
    }

    [Fact]
    public void Run_AsyncVoidThrowsAfterEntryReturned_NoHandler_RunRethrowsSameInstance()
    {
        var thrown = new InvalidOperationException("late async void");
        TestTimeout.OnOwnThread(
            () =>
            {
                Action run = () => PriorityContext.Run(async () =>
                {
                    ThrowAfterYield(thrown); // still running when the entry task completes; Run waits for it
                    await Task.CompletedTask;
                });
                run.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(thrown);
            },
            nameof(Run_AsyncVoidThrowsAfterEntryReturned_NoHandler_RunRethrowsSameInstance));
    }

    [Fact]
    public void Run_EntryThrows_RethrownUnwrapped_NotRaisedAsUnhandled()
    {
        var thrown = new InvalidOperationException("entry");
        int raised = 0;
        TestTimeout.OnOwnThread(
            () =>
            {
                Action run = () => PriorityContext.Run(async () =>
                {
                    PriorityContext.Current!.UnhandledException += (_, _) => raised++;
                    await Priority.Yield();
                    throw thrown;
                });
                run.Should().Throw<InvalidOperationException>().Which.Should().BeSameAs(thrown);
            },
            nameof(Run_EntryThrows_RethrownUnwrapped_NotRaisedAsUnhandled));
        raised.Should().Be(0);
    }

    [Fact]
    public async Task SendFromOtherThread_CallbackThrows_RethrownOnSenderOnce_NotUnhandled_LoopKeepsRunning()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        int raised = 0;
        loop.UnhandledException += (_, _) => Interlocked.Increment(ref raised);
        var thrown = new InvalidOperationException("send");

        Exception? caught = await Task.Run(() =>
        {
            try
            {
                loop.Context.GetSynchronizationContext(1).Send(_ => throw thrown, null);
                return null;
            }
            catch (Exception ex)
            {
                return ex;
            }
        }).WithTimeout("the Send");

        caught.Should().BeSameAs(thrown);
        int level = await loop.Context.GetTaskFactory(0).StartNew(() => PriorityContext.CurrentLevel).WithTimeout("work after the failed Send");
        level.Should().Be(0);
        await loop.DisposeAsync().AsTask().WithTimeout("dispose");
        Volatile.Read(ref raised).Should().Be(0);
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Fact]
    public async Task SendOnLoopThread_CallbackThrows_PropagatesToCaller_NotUnhandled()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        int raised = 0;
        loop.UnhandledException += (_, _) => Interlocked.Increment(ref raised);
        var thrown = new InvalidOperationException("inline send");

        Exception? caught = await loop.Context.GetTaskFactory(0).StartNew(() =>
        {
            try
            {
                loop.Context.GetSynchronizationContext(1).Send(_ => throw thrown, null);
                return null;
            }
            catch (Exception ex)
            {
                return ex;
            }
        }).WithTimeout("the inline Send");

        caught.Should().BeSameAs(thrown);
        await loop.DisposeAsync().AsTask().WithTimeout("dispose");
        Volatile.Read(ref raised).Should().Be(0);
    }

    [Fact]
    public async Task SchedulerTaskThrows_CapturedInTask_NotUnhandled()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        int raised = 0;
        loop.UnhandledException += (_, _) => Interlocked.Increment(ref raised);
        var thrown = new InvalidOperationException("task");

        Task task = loop.Context.GetTaskFactory(1).StartNew(() => throw thrown);
        Func<Task> awaitIt = () => task.WithTimeout("the faulted task");
        (await awaitIt.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(thrown);
        await loop.DisposeAsync().AsTask().WithTimeout("dispose");
        Volatile.Read(ref raised).Should().Be(0);
        loop.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Fact]
    public async Task HandlerThrows_ContextFaultsWithHandlersException()
    {
        var loop = new PriorityContextThread();
        var fromHandler = new InvalidOperationException("handler");
        loop.UnhandledException += (_, _) => throw fromHandler;
        loop.Context.GetSynchronizationContext(0).Post(_ => throw new InvalidOperationException("item"), null);

        Func<Task> completion = () => loop.Completion.WithTimeout("the faulted completion");
        (await completion.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(fromHandler);
    }

    [Fact]
    public async Task ThrowsWhileCompleting_Handled_RemainingWorkStillRuns_CompletesNormally()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        var raised = new ConcurrentQueue<Exception>();
        loop.UnhandledException += (_, e) =>
        {
            raised.Enqueue(e.Exception);
            e.Handled = true;
        };
        using var gate = new ManualResetEventSlim(false);
        int ran = 0;
        var first = new InvalidOperationException("first");
        var second = new InvalidOperationException("second");

        loop.Context.GetSynchronizationContext(1).Post(_ => gate.Wait(TestTimeout.Unexpected), null);
        loop.Context.GetSynchronizationContext(0).Post(_ => throw first, null);
        loop.Context.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ran), null);
        loop.Context.GetSynchronizationContext(0).Post(_ => ThrowAfterYield(second), null);
        loop.Context.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ran), null);
        loop.Complete(); // graceful: everything queued before still runs, throwing or not
        gate.Set();

        await loop.Completion.WithTimeout("completion");
        Volatile.Read(ref ran).Should().Be(2);
        raised.Should().Equal(first, second);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(0);
    }

    [Fact]
    public async Task ThrowsWhileCompleting_NotHandled_CompletionFaults_RestDroppedAndCounted()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        var dropped = new ConcurrentQueue<WorkDroppedEventArgs>();
        loop.Context.WorkDropped += (_, e) => dropped.Enqueue(e);
        using var gate = new ManualResetEventSlim(false);
        int ran = 0;
        var thrown = new InvalidOperationException("while completing");

        loop.Context.GetSynchronizationContext(1).Post(_ => gate.Wait(TestTimeout.Unexpected), null);
        loop.Context.GetSynchronizationContext(0).Post(_ => throw thrown, null);
        loop.Context.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ran), null);
        loop.Context.GetSynchronizationContext(0).Post(_ => Interlocked.Increment(ref ran), null);
        loop.Complete();
        gate.Set();

        Func<Task> completion = () => loop.Completion.WithTimeout("completion");
        (await completion.Should().ThrowAsync<InvalidOperationException>()).Which.Should().BeSameAs(thrown);
        Volatile.Read(ref ran).Should().Be(0);
        dropped.Should().HaveCount(2).And.OnlyContain(d => d.Reason == DropReason.AbandonedAfterFault);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(2);
    }

    [Fact]
    public async Task WorkDroppedHandlerThrows_WhileDroppingAfterFault_EveryItemStillDroppedAndSendersReleased()
    {
        // A WorkDropped handler that throws must not strand the items behind the one it was told about: a blocked Send among them would
        // wait forever, and a later poster no longer drains the queues.
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        int droppedEvents = 0;
        loop.Context.WorkDropped += (_, _) =>
        {
            Interlocked.Increment(ref droppedEvents);
            throw new InvalidOperationException("bad WorkDropped handler");
        };
        using var gate = new ManualResetEventSlim(false);
        var thrown = new InvalidOperationException("fault");

        loop.Context.GetSynchronizationContext(1).Post(_ => gate.Wait(TestTimeout.Unexpected), null);
        loop.Context.GetSynchronizationContext(1).Post(_ => throw thrown, null);
        loop.Context.GetSynchronizationContext(0).Post(_ => { }, null);
        loop.Context.GetSynchronizationContext(0).Post(_ => { }, null);

        var sending = new ManualResetEventSlim(false);
        Task<Exception?> send = Task.Run(() =>
        {
            try
            {
                sending.Set();
                loop.Context.GetSynchronizationContext(0).Send(_ => { }, null);
                return null;
            }
            catch (Exception ex)
            {
                return (Exception?)ex;
            }
        });
        sending.WaitOrFail("the sender to start");
        SpinWait.SpinUntil(() => loop.Context.GetSnapshot().PendingPerLevel[0] == 3, TestTimeout.Unexpected).Should().BeTrue("the Send is queued");
        gate.Set();

        (await send.WithTimeout("the Send to be released by the drop")).Should().BeOfType<ObjectDisposedException>();
        Func<Task> completion = () => loop.Completion.WithTimeout("completion");
        (await completion.Should().ThrowAsync<Exception>()).Which.Should().BeSameAs(thrown, "the fault is what stopped the loop");
        Volatile.Read(ref droppedEvents).Should().Be(3);
        loop.Context.GetSnapshot().DroppedCount.Should().Be(3);
        loop.Context.GetSnapshot().TotalPending.Should().Be(0);
    }

    private static async void ThrowAfterYield(Exception exception)
    {
        await Priority.Yield();
        throw exception;
    }
}
