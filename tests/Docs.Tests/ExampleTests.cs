using System.IO;
using Docs.Tests.Examples;
using Microsoft.Extensions.Logging;
using PriorityAsync;

namespace Docs.Tests;

/// <summary>The guides' code blocks (tests/Docs.Tests/Examples) do what the text around them says.</summary>
public sealed class ExampleTests
{
    [Fact]
    public void ConceptsPolicies_AsPasted_RunsAWeightedSharesLoopWithTheSharesItSet()
    {
        (int exit, string output) = PastedProgram.Run("tests/Docs.Tests/Programs/Policies.cs");

        exit.Should().Be(0);
        output.Should().Be("shares: 3, 2, 4\n", "the block says so in its last comment");
    }

    [Fact]
    public void ConceptsSeveralThreads_AsPasted_IndexesEveryDocumentAndAnswersTheRequest()
    {
        (int exit, string output) = PastedProgram.Run("tests/Docs.Tests/Programs/SeveralThreads.cs");

        exit.Should().Be(0);
        output.Should().Be("answer 42, 50 documents indexed\n", "the block says so in its last comment");
    }

    [Fact]
    public void ConceptsPriorityInversion_AsPasted_TheKeeperWaitsOneMediumItemAtMost()
    {
        (int exit, string output) = PastedProgram.Run("tests/Docs.Tests/Programs/PriorityInversion.cs");

        exit.Should().Be(0);
        output.Should().Be("55 renewals, the longest wait 5 ms\n", "the block says so in its last comment");
    }

    [Fact]
    public void ConceptsCheckpoints_UrgentWorkArrives_RunsAtTheNextCheckpointAndEndsTheStepLoop()
    {
        List<string> order = OwnThread.Run(() =>
        {
            var order = new List<string>();
            PriorityContext.Run(async () =>
            {
                PriorityContext context = PriorityContext.Current!;
                await context.Prioritize(1);
                int steps = 0;
                await ConceptsExamples.CheckpointsAsync(
                    [0, 1, 2],
                    row =>
                    {
                        order.Add($"row {row}");
                        if (row == 1)
                        {
                            context.GetSynchronizationContext(2).Post(_ => order.Add("urgent"), null);
                        }
                    },
                    () =>
                    {
                        order.Add($"step {++steps}");
                        if (steps == 3)
                        {
                            context.GetSynchronizationContext(2).Post(_ => order.Add("urgent again"), null);
                        }
                    });
                order.Add("done");
            }, new PriorityContextOptions { Levels = 3 });
            return order;
        }, "the checkpoints example");

        order.Should().Equal("row 0", "row 1", "urgent", "row 2", "step 1", "step 2", "step 3", "done", "urgent again");
    }

    [Fact]
    public void ConceptsController_SetLevelThenCancel_DropsTheQueuedWorkAsCancelled()
    {
        (bool cancelled, List<DropReason> drops, List<string> rendered) = OwnThread.Run(() =>
        {
            var drops = new List<DropReason>();
            var rendered = new List<string>();
            Task? done = null;
            PriorityContext.Run(() =>
            {
                PriorityContext context = PriorityContext.Current!;
                context.WorkDropped += (_, e) => drops.Add(e.Reason);
                done = ConceptsExamples.RenderDocument(context, ["page 1", "page 2"], async page =>
                {
                    rendered.Add(page);
                    await Task.Yield();
                });
            }, new PriorityContextOptions { Levels = 3 });
            return (done!.IsCanceled, drops, rendered);
        }, "the controller example");

        rendered.Should().BeEmpty("the job was cancelled before the loop reached its queued work");
        drops.Should().NotBeEmpty().And.OnlyContain(r => r == DropReason.Cancelled);
        cancelled.Should().BeTrue("the task of job.Run is cancelled with the job");
    }

    [Fact]
    public void ConceptsTimers_Run_ResumesOnTheLoopAtTheAwaitingLevel()
    {
        (int level, int thread, int loopThread) = OwnThread.Run(() =>
            PriorityContext.Run(async () =>
            {
                await Priority.Prioritize(1);
                (int level, int thread) = await ConceptsExamples.TimersAsync(Task.CompletedTask);
                return (level, thread, Environment.CurrentManagedThreadId);
            }, new PriorityContextOptions { Levels = 3 }), "the timers example");

        level.Should().Be(1);
        thread.Should().Be(loopThread);
    }

    [Fact]
    public void ConceptsTaskScope_BodyDone_TheKeeperRanAtLevel2AndEndedBeforeTheScope()
    {
        List<string> order = OwnThread.Run(() =>
        {
            var order = new List<string>();
            PriorityContext.Run(async () =>
            {
                await ConceptsExamples.HandleAsync(
                    "m1",
                    async (message, token) =>
                    {
                        order.Add($"keeper of {message} at level {PriorityContext.CurrentLevel}");
                        try
                        {
                            await Priority.Delay(OwnThread.Unexpected, token);   // renews until the scope cancels it
                        }
                        catch (OperationCanceledException)
                        {
                            order.Add("keeper stopped");
                        }
                    },
                    async message =>
                    {
                        await Task.Yield();                                      // the keeper starts meanwhile, at level 2
                        order.Add($"processed {message}");
                    });
                order.Add("scope ended");
            }, new PriorityContextOptions { Levels = 3 });
            return order;
        }, "the TaskScope example");

        order.Should().Equal("keeper of m1 at level 2", "processed m1", "keeper stopped", "scope ended");
    }

    [Fact]
    public async Task ReliabilityStall_LoopBlockedWhileWorkWaits_LogsTheStall()
    {
        var logs = new CapturingLoggerProvider();
        using var release = new ManualResetEventSlim();
        using var blocking = new ManualResetEventSlim();
        Task<IReadOnlyList<string>> stalled = logs.WaitForAsync(m => m.StartsWith("Loop stalled", StringComparison.Ordinal));

        await ReliabilityExamples.RunWatchedAsync(logs.CreateLogger("test"), async context =>
        {
            context.GetSynchronizationContext(0).Post(_ => { blocking.Set(); release.Wait(OwnThread.Unexpected); }, null);   // blocks the loop
            blocking.Wait(OwnThread.Unexpected).Should().BeTrue("the loop starts the blocking item");
            context.GetSynchronizationContext(2).Post(_ => { }, null);                                 // waits behind it
            try
            {
                await stalled.Within("the stall report");
            }
            finally
            {
                release.Set();
            }
        });

        (await stalled).Single().Should().StartWith("Loop stalled: level 2 work has waited at least ");
    }

    [Fact]
    public void ObservabilityRecorder_Run_WritesATraceWithTheLoopsLevels()
    {
        string path = Path.Combine(Path.GetTempPath(), $"priorityasync-docs-{Guid.NewGuid():N}.json");
        try
        {
            int recorded = OwnThread.Run(() => ObservabilityExamples.RecordTrace(path), "the recorder example");

            recorded.Should().BePositive();
            File.ReadAllText(path).Should().Contain("demo / level 2");
        }
        finally
        {
            File.Delete(path);
        }
    }
}
