using System.Collections.Concurrent;
using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Reliability.Faults;

/// <summary>
/// <see cref="PriorityContext.InvokeAsync(Func{Task}, int)"/> from two threads while a third completes the loop. Checked by
/// accounting, per round: every returned task completes (bounded wait); a task that ran to completion ran its work exactly once and
/// to its end, after an await (so InvokeAsync's hold kept the loop alive for the continuation); a task that faulted did so with
/// <see cref="ObjectDisposedException"/>, its work never started, and it was reported through WorkDropped exactly once.
/// </summary>
public sealed class InvokeAsyncShutdownRaceTests
{
    [Fact]
    public async Task InvokeAsyncWhileTheLoopCompletes_EveryTaskRunsToItsEndOrFaultsAndIsReported()
    {
        int totalDropped = 0;
        for (int round = 0; round < 20; round++)
        {
            totalDropped += await RunRound(seed: round);
        }

        totalDropped.Should().BeGreaterThan(0, "invocations after the end must have been exercised");
    }

    private static async Task<int> RunRound(int seed)
    {
        var random = new Random(seed);
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = $"invoke-race-{seed}", IdleSpinCount = random.Next(0, 30) });
        PriorityContext context = loop.Context;
        int droppedEvents = 0;
        context.WorkDropped += (_, e) =>
        {
            if (e.Callback == IInvokeOperation.RunCallback)
            {
                Interlocked.Increment(ref droppedEvents);
            }
        };

        var tasks = new ConcurrentQueue<Task>();
        int started = 0;
        int finished = 0;
        using var go = new ManualResetEventSlim(false);
        int completeAfter = random.Next(0, 400);
        int invokedSoFar = 0;
        var threads = new List<Thread>();
        for (int t = 0; t < 2; t++)
        {
            int threadSeed = random.Next();
            threads.Add(new Thread(() =>
            {
                var r = new Random(threadSeed);
                go.Wait();
                for (int i = 0; i < 500; i++)
                {
                    tasks.Enqueue(context.InvokeAsync(
                        async () =>
                        {
                            Interlocked.Increment(ref started);
                            await Task.Yield();
                            Interlocked.Increment(ref finished);
                        },
                        r.Next(3)));
                    Interlocked.Increment(ref invokedSoFar);
                    if (r.Next(40) == 0)
                    {
                        Thread.Sleep(1); // lets a completed loop drain and finish, so later invocations meet a finished context
                    }
                }
            }) { IsBackground = true });
        }

        threads.Add(new Thread(() =>
        {
            go.Wait();
            SpinWait.SpinUntil(() => Volatile.Read(ref invokedSoFar) >= completeAfter, TestTimeout.Unexpected); // bounded: an invoker that failed must not leave it spinning
            loop.Complete();
        }) { IsBackground = true });

        threads.ForEach(t => t.Start());
        go.Set();
        threads.ForEach(t => t.JoinOrFail("an invoking thread"));
        await loop.Completion.WithTimeout("the loop to finish");

        int ranToEnd = 0;
        int rejected = 0;
        foreach (Task task in tasks)
        {
            try
            {
                await task.WithTimeout("an InvokeAsync task: it must complete, never hang");
                ranToEnd++;
            }
            catch (ObjectDisposedException)
            {
                rejected++;
            }
        }

        ranToEnd.Should().Be(Volatile.Read(ref finished), $"round {seed}: every completed task ran its work to the end");
        Volatile.Read(ref started).Should().Be(ranToEnd, $"round {seed}: no rejected work started, and every started work finished");
        rejected.Should().Be(Volatile.Read(ref droppedEvents), $"round {seed}: every rejection was reported once");
        (ranToEnd + rejected).Should().Be(1_000);
        return rejected;
    }
}
