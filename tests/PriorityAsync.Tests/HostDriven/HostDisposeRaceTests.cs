using System.Collections.Concurrent;
using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.HostDriven;

/// <summary>
/// A host-driven context disposed from another thread while producers hand it async work, as a user met it: a host thread attaches and
/// loops <c>Drain()</c> (or <c>Drain(budget)</c>), waiting for <c>workAvailable</c> when a drain leaves nothing; two or three producers
/// call <c>InvokeAsync(async () =&gt; { await Task.Yield(); ... })</c> and post; another thread disposes the driver at a random moment.
/// Every task <c>InvokeAsync</c> returned must complete (its work ran to its end, or it faulted with ObjectDisposedException), and
/// every post ran or was reported dropped. Seeded; a failing round names its seed.
/// </summary>
public sealed class HostDisposeRaceTests(ITestOutputHelper output)
{
    [Fact]
    public void DisposeFromAnotherThread_WhileProducersInvokeAsyncWorkAwaitingTaskYield_EveryAcceptedTaskCompletes()
    {
        var failures = new List<string>();
        int rounds = 200;
        for (int seed = 0; seed < rounds; seed++)
        {
            if (RunRound(seed) is { } failure)
            {
                failures.Add(failure);
            }
        }

        output.WriteLine($"{failures.Count} of {rounds} rounds failed");
        failures.Should().BeEmpty();
    }

    private static string? RunRound(int seed)
    {
        var random = new Random(seed);
        bool budget = random.Next(2) == 0;
        var wake = new AutoResetEvent(false);
        var attached = new TaskCompletionSource<PriorityContextDriver>(TaskCreationOptions.RunContinuationsAsynchronously);
        var errors = new ConcurrentQueue<string>();
        var host = new Thread(() =>
        {
            PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(
                new PriorityContextOptions { Levels = 3, Name = $"host-dispose-race-{seed}", StallTimeout = null }, () => wake.Set());
            attached.SetResult(driver);
            try
            {
                while (driver.Context.State == PrioritySchedulerState.Running)
                {
                    PriorityDrainResult result = budget ? driver.Drain(TimeSpan.FromMilliseconds(1)) : driver.Drain();
                    if (!result.WorkRemains && driver.Context.State == PrioritySchedulerState.Running && !wake.WaitOne(TestTimeout.Unexpected))
                    {
                        errors.Enqueue("the host was never told of work");
                        return;
                    }
                }
            }
            catch (ObjectDisposedException)
            {
                // A root failure the end rethrew: none here (no children), but it is an outcome, not a hang.
            }
        }) { IsBackground = true, Name = "host" };
        host.Start();
        PriorityContextDriver driver = attached.Task.WaitAsync(TestTimeout.Unexpected).GetAwaiter().GetResult();
        PriorityContext context = driver.Context;

        var posts = new ConcurrentQueue<int[]>(); // [ran, dropped]
        context.WorkDropped += (_, e) =>
        {
            if (e.State is int[] post)
            {
                Interlocked.Increment(ref post[1]);
            }
        };
        var invocations = new ConcurrentQueue<Task>();
        int issued = 0;
        int waiting = 0; // works that have yielded and not resumed: their continuation is queued
        int disposeAfter = random.Next(0, 300);
        var threads = new List<Thread>();
        int producers = random.Next(2, 4);
        for (int p = 0; p < producers; p++)
        {
            int producerSeed = random.Next();
            threads.Add(new Thread(() =>
            {
                var r = new Random(producerSeed);
                for (int i = 0; i < 150; i++)
                {
                    int level = r.Next(3);
                    if (r.Next(4) == 0)
                    {
                        int[] post = new int[2];
                        posts.Enqueue(post);
                        context.GetSynchronizationContext(level).Post(static state => Interlocked.Increment(ref ((int[])state!)[0]), post);
                    }
                    else
                    {
                        invocations.Enqueue(context.InvokeAsync(
                            async () =>
                            {
                                Interlocked.Increment(ref waiting);
                                await Task.Yield();
                                Interlocked.Decrement(ref waiting);
                                await Task.Yield();
                            },
                            level));
                    }

                    Interlocked.Increment(ref issued);
                }
            }) { IsBackground = true });
        }

        threads.Add(new Thread(() =>
        {
            SpinWait.SpinUntil(() => Volatile.Read(ref issued) >= disposeAfter, TestTimeout.Unexpected);

            // Then while some work waits for its continuation (it may still run before the request is seen: a race, not a gate).
            SpinWait.SpinUntil(() => Volatile.Read(ref waiting) > 0 || Volatile.Read(ref issued) == producers * 150, TestTimeout.Unexpected);
            driver.Dispose(); // a request: the host's next drain ends the context
        }) { IsBackground = true });
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.JoinOrFail($"round {seed}: a producer or the disposing thread"));
        host.JoinOrFail($"round {seed}: the host's drain loop");

        Task all = Task.WhenAll(invocations);
        if (Task.WaitAny([all], TestTimeout.Unexpected) < 0)
        {
            Task[] stranded = [.. invocations.Where(t => !t.IsCompleted)];
            errors.Enqueue($"{stranded.Length} accepted InvokeAsync tasks are still {stranded[0].Status} {TestTimeout.Unexpected.TotalSeconds} s after the end");
        }

        foreach (Task task in invocations.Where(t => t.IsFaulted && t.Exception!.InnerException is not ObjectDisposedException))
        {
            errors.Enqueue($"an InvokeAsync task faulted with {task.Exception!.InnerException}");
        }

        foreach (int[] post in posts.Where(p => p[0] + p[1] != 1))
        {
            errors.Enqueue($"a post ran {post[0]} times and was reported dropped {post[1]} times");
        }

        return errors.IsEmpty
            ? null
            : $"Round {seed} ({(budget ? "Drain(1 ms)" : "Drain()")}, Dispose after {disposeAfter} calls): {string.Join("; ", errors)}";
    }
}
