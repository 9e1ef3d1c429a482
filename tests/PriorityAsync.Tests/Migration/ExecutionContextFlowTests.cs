using Nito.AsyncEx;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>
/// What .NET carries per item in the <see cref="ExecutionContext"/> (<see cref="AsyncLocal{T}"/> values, and with them
/// <c>Activity.Current</c> and logging scopes) behaves on the loop as on the thread pool and on AsyncEx's <c>AsyncContext</c> (rule E1
/// at the top of Context/PriorityContext.cs): each plain callback runs in its poster's context, and nothing one callback sets reaches
/// the next, or the caller of <c>Run</c>. Every case runs the same code on both libraries; async methods are not in these tests on
/// purpose (their state machines restore their own context, so they pass on any loop and prove nothing).
/// </summary>
public class ExecutionContextFlowTests
{
    private static readonly AsyncLocal<int> s_value = new();

    public static TheoryData<string> BothLibraries => new() { "AsyncEx", "PriorityAsync" };

    private static ContextLibrary Library(string name) => name == "AsyncEx" ? ContextLibrary.AsyncEx : ContextLibrary.PriorityAsync;

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public void Post_ValueSetInOneCallback_NotSeenByTheNextCallbackNorAfterRun(string name)
    {
        ContextLibrary library = Library(name);
        int seenByNext = -1;
        int seenAfterRun = -1;
        TestTimeout.OnOwnThread(
            () =>
            {
                library.Run(() =>
                {
                    SynchronizationContext context = SynchronizationContext.Current!;
                    context.Post(_ => s_value.Value = 42, null);
                    context.Post(_ => seenByNext = s_value.Value, null);
                });
                seenAfterRun = s_value.Value;
            },
            name);

        seenByNext.Should().Be(0, "a value one callback sets must not reach the next one");
        seenAfterRun.Should().Be(0, "nothing set on the loop may reach the caller of Run");
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public void RunAction_ValueSetInTheSynchronousEntry_DoesNotLeakOutOfRun(string name)
    {
        ContextLibrary library = Library(name);
        int seenAfterRun = -1;
        TestTimeout.OnOwnThread(
            () =>
            {
                library.Run(() => s_value.Value = 7);
                seenAfterRun = s_value.Value;
            },
            name);

        seenAfterRun.Should().Be(0);
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public void Run_EntrySeesTheCallersValue_AndTheCallerKeepsIt(string name)
    {
        ContextLibrary library = Library(name);
        int seenByEntry = -1;
        int seenByPostedCallback = -1;
        int seenAfterRun = -1;
        TestTimeout.OnOwnThread(
            () =>
            {
                s_value.Value = 5;
                library.Run(() =>
                {
                    seenByEntry = s_value.Value;
                    SynchronizationContext.Current!.Post(_ => seenByPostedCallback = s_value.Value, null);
                });
                seenAfterRun = s_value.Value;
            },
            name);

        seenByEntry.Should().Be(5, "the entry runs in its caller's context, as Task.Run's delegate does");
        seenByPostedCallback.Should().Be(5, "a callback runs in its poster's context");
        seenAfterRun.Should().Be(5);
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task PostFromAnotherThread_CallbackSeesThePostersValue(string name)
    {
        using ContextThread thread = Library(name).StartThread();
        SynchronizationContext context = await LoopSynchronizationContext(thread);
        var seen = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        await Task.Run(() =>
        {
            s_value.Value = 11;
            context.Post(_ => seen.SetResult(s_value.Value), null);
        });

        (await seen.Task.WithTimeout("the posted callback")).Should().Be(11);
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task SendFromAnotherThread_CallbackSeesTheSendersValue(string name)
    {
        using ContextThread thread = Library(name).StartThread();
        SynchronizationContext context = await LoopSynchronizationContext(thread);

        int seen = await Task.Run(() =>
        {
            s_value.Value = 12;
            int value = -1;
            context.Send(_ => value = s_value.Value, null);
            return value;
        }).WithTimeout("the sent callback");

        seen.Should().Be(12);
    }

    [Theory]
    [MemberData(nameof(BothLibraries))]
    public async Task ProgressCreatedOnTheLoop_ReportFromAnotherThread_HandlerSeesTheReportersValue(string name)
    {
        using ContextThread thread = Library(name).StartThread();
        var seen = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        IProgress<int> progress = await thread.Run<IProgress<int>>(() => new Progress<int>(_ => seen.TrySetResult(s_value.Value)))
            .WithTimeout("creating the Progress on the loop");

        await Task.Run(() =>
        {
            s_value.Value = 13;
            progress.Report(1);
        });

        (await seen.Task.WithTimeout("the progress handler")).Should().Be(13);
    }

    [Fact]
    public async Task UnflowedPosts_ValueSetByOneCallback_AsyncExLeaksItIntoTheNext_PriorityAsyncDoesNot()
    {
        // Posted with flow suppressed (as a library posts from UnsafeOnCompleted or a timer callback that captured nothing): AsyncEx
        // wraps each callback in a Task that captured no context, and a Task with none runs in whatever the loop thread has, so a value
        // one callback sets is seen by the next. PriorityAsync runs such a callback in the default context, as the thread pool does.
        (await SeenAfterUnflowedPosts(ContextLibrary.AsyncEx)).Should().Be(99);
        (await SeenAfterUnflowedPosts(ContextLibrary.PriorityAsync)).Should().Be(0);
    }

    private static async Task<int> SeenAfterUnflowedPosts(ContextLibrary library)
    {
        using ContextThread thread = library.StartThread();
        SynchronizationContext context = await LoopSynchronizationContext(thread);
        var setter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var seen = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        PostUnflowed(context, _ =>
        {
            s_value.Value = 99;
            setter.SetResult();
        });
        await setter.Task.WithTimeout("the setting callback");
        PostUnflowed(context, _ => seen.SetResult(s_value.Value));
        return await seen.Task.WithTimeout("the reading callback");
    }

    private static void PostUnflowed(SynchronizationContext context, SendOrPostCallback callback)
    {
        using (ExecutionContext.SuppressFlow())
        {
            context.Post(callback, null);
        }
    }

    [Fact]
    public async Task PriorityContextThread_ItemsDoNotSeeTheCreatorsValues()
    {
        // A dedicated loop thread starts in the default context, as a thread-pool thread does: a value its creator happened to have
        // set is not part of every item the loop runs.
        int seen = -1;
        await Task.Run(async () =>
        {
            s_value.Value = 21;
            var thread = new PriorityContextThread(); // created here, where the value is set
            await using (thread.BoundedDisposal())
            {
                var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                using (ExecutionContext.SuppressFlow())
                {
                    thread.Context.GetSynchronizationContext(0).Post(_ =>
                    {
                        seen = s_value.Value;
                        done.SetResult();
                    }, null);
                }

                await done.Task.WithTimeout("the callback");
            }
        }).WithTimeout("the creating task");

        seen.Should().Be(0);
    }

    [Fact]
    public async Task Levels_CallbacksPostedFromTwoThreadsAtTwoLevels_EachSeesItsOwnPostersValue()
    {
        var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3 });
        await using var disposeThread = thread.BoundedDisposal();
        var seen = new int[2];
        using (thread.Context.PauseLoop())
        {
            Task first = Task.Run(() =>
            {
                s_value.Value = 100;
                thread.Context.GetSynchronizationContext(0).Post(_ => seen[0] = s_value.Value, null);
            });
            Task second = Task.Run(() =>
            {
                s_value.Value = 200;
                thread.Context.GetSynchronizationContext(2).Post(_ => seen[1] = s_value.Value, null);
            });
            await Task.WhenAll(first, second).WithTimeout("the posts");
        }

        await thread.Context.InvokeAsync(() => Task.CompletedTask, 0).WithTimeout("draining the loop");
        seen.Should().Equal(100, 200);
    }

    [Fact]
    public async Task InvokeAsync_WorkSeesTheCallersValue_AndSetsNothingForTheNextItem()
    {
        var thread = new PriorityContextThread();
        await using var disposeThread = thread.BoundedDisposal();
        int seenByWork = await Task.Run(() =>
        {
            s_value.Value = 31;
            return thread.Context.InvokeAsync(() =>
            {
                int value = s_value.Value;
                s_value.Value = 32; // a synchronous part that sets a value
                return Task.FromResult(value);
            }).Task;
        }).WithTimeout("InvokeAsync");
        int seenAfter = await Task.Run(() =>
        {
            using (ExecutionContext.SuppressFlow())
            {
                return thread.Context.InvokeAsync(() => Task.FromResult(s_value.Value)).Task;
            }
        }).WithTimeout("the next InvokeAsync");

        seenByWork.Should().Be(31);
        seenAfter.Should().Be(0);
    }

    [Fact]
    public async Task Controller_PostAndRunFromAnotherThread_SeeTheCallersValue_AndDoNotLeak()
    {
        var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeThread = thread.BoundedDisposal();
        PriorityTaskController controller = thread.Context.CreateController(1);
        var seenByPost = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var seenBySyncContextPost = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);

        int seenByRun = await Task.Run(() =>
        {
            s_value.Value = 41;
            controller.Post(() =>
            {
                seenByPost.SetResult(s_value.Value);
                s_value.Value = 43; // left behind: must not reach the next item
            });
            controller.SynchronizationContext.Post(_ => seenBySyncContextPost.SetResult(s_value.Value), null);
            return controller.Run(() => Task.FromResult(s_value.Value)).Task;
        }).WithTimeout("the controller's Run");
        int seenUnflowed = await Task.Run(() =>
        {
            using (ExecutionContext.SuppressFlow())
            {
                return controller.Run(() => Task.FromResult(s_value.Value)).Task;
            }
        }).WithTimeout("an unflowed Run");

        (await seenByPost.Task.WithTimeout("the controller's Post")).Should().Be(41);
        (await seenBySyncContextPost.Task.WithTimeout("the controller context's Post")).Should().Be(41);
        seenByRun.Should().Be(41);
        seenUnflowed.Should().Be(0);
    }

    [Fact]
    public void Run_CalledWithFlowSuppressed_GivesTheThreadBackSuppressed_AndUndoStillWorks()
    {
        int seenAfterUndo = -1;
        bool suppressedAfterRun = false;
        TestTimeout.OnOwnThread(
            () =>
            {
                s_value.Value = 8;
                AsyncFlowControl flow = ExecutionContext.SuppressFlow();
                PriorityContext.Run(() => SynchronizationContext.Current!.Post(_ => s_value.Value = 9, null));
                suppressedAfterRun = ExecutionContext.IsFlowSuppressed();
                flow.Undo();
                seenAfterUndo = s_value.Value;
            },
            "suppressed flow");

        suppressedAfterRun.Should().BeTrue();
        seenAfterUndo.Should().Be(8);
    }

    [Fact]
    public async Task QueuedPrioritizeContinuation_AfterAPlainCallbackSetAValue_ResumesWithTheMethodsOwnValue()
    {
        // An async method captured nothing (the default context); a plain callback that runs before its continuation sets a value and
        // returns. The continuation resumes with nothing set, as it would on a thread-pool thread.
        var thread = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        await using var disposeThread = thread.BoundedDisposal();
        int seen = await Task.Run(() =>
        {
            using (ExecutionContext.SuppressFlow())
            {
                return thread.Context.InvokeAsync(
                    async () =>
                    {
                        SynchronizationContext.Current!.Post(_ => s_value.Value = 55, null);
                        await Priority.Yield(); // queued behind the callback
                        return s_value.Value;
                    },
                    0).Task;
            }
        }).WithTimeout("the awaiting method");

        seen.Should().Be(0);
    }

    private static async Task<SynchronizationContext> LoopSynchronizationContext(ContextThread thread) =>
        await thread.Run(() => SynchronizationContext.Current!).WithTimeout("the loop's SynchronizationContext");
}
