using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.AbHarness;

/// <summary>
/// The measured cases. Only API that every commit of the library has had is used here (see the project file), so the same source
/// compiles against both sides of an A/B.
/// </summary>
/// <remarks>
/// <para>Throughput cases run <see cref="CaseSettings.WarmupRounds"/> unmeasured rounds, then <see cref="CaseSettings.Rounds"/>
/// measured ones, and report the median round (ns per item) and the bytes allocated per item over all measured rounds: on the loop
/// thread (<see cref="GC.GetAllocatedBytesForCurrentThread"/>) for the loop-thread cases, by the whole process
/// (<see cref="GC.GetTotalAllocatedBytes(bool)"/>) for the cross-thread ones.</para>
/// <para>The <c>asynclocal</c> variant sets one <see cref="AsyncLocal{T}"/> value on the thread that posts or awaits, before it posts
/// or awaits (inside the entry point for the loop-thread cases), so every post captures a non-default ExecutionContext.</para>
/// </remarks>
public static class Cases
{
    private const int PostDrainItems = 16_384;
    private const int AwaitOps = 20_000;
    private const int StreamItems = 32_768;
    private const int EmptyDrains = 1_000_000;
    private const int InvokeCalls = 4_096;

    private static readonly AsyncLocal<object?> s_local = new();
    private static readonly object s_marker = new();
    private static readonly SendOrPostCallback s_count = static _ => s_counter++;
    private static readonly SendOrPostCallback s_noop = static _ => { };
    private static readonly Func<Task> s_completedWork = static () => Task.CompletedTask;

    private static long s_counter;

    /// <summary>Runs the cases of <paramref name="settings"/> and hands each figure to <paramref name="report"/> as it is measured.</summary>
    public static void Run(CaseSettings settings, Action<CaseResult> report)
    {
        foreach (string name in settings.Cases)
        {
            foreach (string variant in settings.Variants)
            {
                bool asyncLocal = variant == "asynclocal";
                foreach (CaseResult result in RunCase(name, settings, asyncLocal))
                {
                    report(result with { Variant = variant });
                }

                s_local.Value = null; // never leak into the next variant
            }
        }
    }

    private static IEnumerable<CaseResult> RunCase(string name, CaseSettings settings, bool asyncLocal) => name switch
    {
        "post-drain" => PostDrain(settings, asyncLocal),
        "yield" => YieldCase(settings, asyncLocal),
        "prioritize-inline" => PrioritizeInline(settings, asyncLocal),
        "prioritize-queued" => PrioritizeQueued(settings, asyncLocal),
        "stream-1p" => Stream(settings, asyncLocal),
        "wake" => Wake(settings, asyncLocal),
        "host-drain" => HostDrain(settings, asyncLocal),
        "invoke" => Invoke(settings, asyncLocal),
        _ => throw new ArgumentException($"Unknown case '{name}'. Cases: {string.Join(", ", CaseSettings.AllCases)}."),
    };

    /// <summary>The loop posts <see cref="PostDrainItems"/> callbacks to its own level, then awaits a Yield queued behind them.</summary>
    private static IEnumerable<CaseResult> PostDrain(CaseSettings settings, bool asyncLocal) =>
        LoopRounds("post-drain", settings, asyncLocal, PostDrainItems, static async () =>
        {
            SynchronizationContext target = SynchronizationContext.Current!;
            for (int i = 0; i < PostDrainItems; i++)
            {
                target.Post(s_count, null);
            }

            await Priority.Yield(); // FIFO within the level: runs after the batch
        });

    /// <summary><c>await Priority.Yield()</c>: the continuation is queued at the back of its level each time.</summary>
    private static IEnumerable<CaseResult> YieldCase(CaseSettings settings, bool asyncLocal) =>
        LoopRounds("yield", settings, asyncLocal, AwaitOps, static async () =>
        {
            for (int i = 0; i < AwaitOps; i++)
            {
                await Priority.Yield();
            }
        });

    /// <summary><c>await Prioritize(1)</c> then <c>(0)</c>, nothing queued: both complete inline. Per await.</summary>
    private static IEnumerable<CaseResult> PrioritizeInline(CaseSettings settings, bool asyncLocal) =>
        LoopRounds("prioritize-inline", settings, asyncLocal, 2 * AwaitOps, static async () =>
        {
            for (int i = 0; i < AwaitOps; i++)
            {
                await Priority.Prioritize(1);
                await Priority.Prioritize(0);
            }
        });

    /// <summary>At level 1: post a no-op at level 1, then <c>await Prioritize(0)</c> (must queue behind it) and <c>await Prioritize(1)</c>
    /// (inline). Per iteration: one post, one queued switch, one inline switch.</summary>
    private static IEnumerable<CaseResult> PrioritizeQueued(CaseSettings settings, bool asyncLocal) =>
        LoopRounds("prioritize-queued", settings, asyncLocal, AwaitOps, static async () =>
        {
            await Priority.Prioritize(1);
            SynchronizationContext level1 = SynchronizationContext.Current!;
            for (int i = 0; i < AwaitOps; i++)
            {
                level1.Post(s_noop, null);
                await Priority.Prioritize(0);
                await Priority.Prioritize(1);
            }
        });

    /// <summary>
    /// Runs <paramref name="round"/> on a fresh <see cref="PriorityContext"/> (Run, on this thread) warm-up plus measured times, with
    /// the AsyncLocal set inside the entry point when asked.
    /// </summary>
    private static IEnumerable<CaseResult> LoopRounds(string name, CaseSettings settings, bool asyncLocal, int items, Func<Task> round)
    {
        double[] nsPerItem = new double[settings.Rounds];
        long bytes = 0;
        PriorityContext.Run(
            async () =>
            {
                if (asyncLocal)
                {
                    s_local.Value = s_marker;
                }

                for (int r = -settings.WarmupRounds; r < settings.Rounds; r++)
                {
                    long allocated = GC.GetAllocatedBytesForCurrentThread();
                    long start = Stopwatch.GetTimestamp();
                    await round();
                    long elapsed = Stopwatch.GetTimestamp() - start;
                    long roundBytes = GC.GetAllocatedBytesForCurrentThread() - allocated;
                    if (r >= 0)
                    {
                        nsPerItem[r] = Ns(elapsed) / items;
                        bytes += roundBytes;
                    }
                }
            },
            settings.CreateOptions("ab-" + name));

        yield return new CaseResult(name, "", "ns/item", Stats.Median(nsPerItem));
        yield return new CaseResult(name, "", "B/item", (double)bytes / ((long)items * settings.Rounds));
    }

    /// <summary>One producer thread posts <see cref="StreamItems"/> callbacks to a <see cref="PriorityContextThread"/>; the round ends
    /// when the last one has run. Time from the producer's first post to the last callback, per item.</summary>
    private static IEnumerable<CaseResult> Stream(CaseSettings settings, bool asyncLocal)
    {
        using var loop = new PriorityContextThread(settings.CreateOptions("ab-stream"));
        SynchronizationContext target = loop.Context.GetSynchronizationContext(0);
        var state = new StreamState();
        var go = new SemaphoreSlim(0);
        int totalRounds = settings.WarmupRounds + settings.Rounds;
        var producer = new Thread(() =>
        {
            if (asyncLocal)
            {
                s_local.Value = s_marker;
            }

            for (int r = 0; r < totalRounds; r++)
            {
                go.Wait();
                Volatile.Write(ref state.Start, Stopwatch.GetTimestamp());
                for (int i = 0; i < StreamItems - 1; i++)
                {
                    target.Post(s_count, null);
                }

                target.Post(StreamState.Last, state);
            }
        })
        { IsBackground = true, Name = "ab producer" };
        producer.Start();

        double[] nsPerItem = new double[settings.Rounds];
        long bytes = 0;
        for (int r = -settings.WarmupRounds; r < settings.Rounds; r++)
        {
            state.Done.Reset();
            long allocated = GC.GetTotalAllocatedBytes(precise: true);
            go.Release();
            if (!state.Done.Wait(TimeSpan.FromSeconds(30)))
            {
                throw new TimeoutException("stream-1p: the loop did not run the last item within 30 s.");
            }

            long roundBytes = GC.GetTotalAllocatedBytes(precise: true) - allocated;
            if (r >= 0)
            {
                nsPerItem[r] = Ns(state.End - state.Start) / StreamItems;
                bytes += roundBytes;
            }
        }

        producer.Join();
        yield return new CaseResult("stream-1p", "", "ns/item", Stats.Median(nsPerItem));
        yield return new CaseResult("stream-1p", "", "B/item", (double)bytes / ((long)StreamItems * settings.Rounds));
    }

    /// <summary>
    /// Wake-up of a parked <see cref="PriorityContextThread"/>: this thread sleeps 1 ms (the loop parks), takes a timestamp and posts;
    /// the callback takes one as it starts. The same probe wakes a thread blocked in <see cref="ManualResetEventSlim.Wait()"/> as the
    /// floor, sample by sample in turn with the loop's, so both see the same machine. Reported: p50 and p90 of each, the ratio of the
    /// p50s, and the bytes the whole process allocated per wake-up of the loop.
    /// </summary>
    private static IEnumerable<CaseResult> Wake(CaseSettings settings, bool asyncLocal)
    {
        int samples = settings.WakeSamples;
        WakeProbe loopProbe = new(samples);
        WakeProbe eventProbe = new(samples);
        using (var loop = new PriorityContextThread(settings.CreateOptions("ab-wake")))
        using (var signal = new ManualResetEventSlim(false))
        {
            SynchronizationContext target = loop.Context.GetSynchronizationContext(2);
            SendOrPostCallback arrived = static state => ((WakeProbe)state!).Arrived();
            var receiver = new Thread(() =>
            {
                for (int i = 0; i < WakeProbe.Total(samples); i++)
                {
                    signal.Wait();
                    signal.Reset();
                    eventProbe.Arrived();
                }
            })
            { IsBackground = true, Name = "ab event receiver" };
            receiver.Start();
            if (asyncLocal)
            {
                s_local.Value = s_marker;
            }

            Action post = () => target.Post(arrived, loopProbe);
            Action set = signal.Set;
            for (int i = 0; i < WakeProbe.Total(samples); i++)
            {
                loopProbe.MeasureOne(post);
                eventProbe.MeasureOne(set);
            }

            s_local.Value = null;
            receiver.Join();
        }

        double loopP50 = loopProbe.PercentileUs(0.5);
        double eventP50 = eventProbe.PercentileUs(0.5);
        yield return new CaseResult("wake", "", "p50 us", loopP50);
        yield return new CaseResult("wake", "", "p90 us", loopProbe.PercentileUs(0.9));
        yield return new CaseResult("wake", "", "MRES p50 us", eventP50);
        yield return new CaseResult("wake", "", "p50 / MRES p50", loopP50 / eventP50);
        yield return new CaseResult("wake", "", "B/wake", (double)loopProbe.AllocatedBytes / samples);
    }

    /// <summary>
    /// A host's <c>Drain()</c> with nothing to do, the frame loop's common case (a few field reads, [H-WAKE]): a thread attached with
    /// <c>PriorityContext.AttachToCurrentThread</c> calls it <see cref="EmptyDrains"/> times per round; per call. Needs a library with
    /// the host-driven context: a side whose library has no <c>PriorityContextDriver</c> is built without it (SideBuilder) and fails
    /// this case with a message.
    /// </summary>
    private static IEnumerable<CaseResult> HostDrain(CaseSettings settings, bool asyncLocal)
    {
#if PRIORITYASYNC_HOST_DRAIN
        double[] nsPerItem = new double[settings.Rounds];
        long bytes = 0;
        var host = new Thread(() =>
        {
            PriorityContextDriver driver = PriorityContext.AttachToCurrentThread(settings.CreateOptions("ab-host-drain"));
            if (asyncLocal)
            {
                s_local.Value = s_marker;
            }

            for (int r = -settings.WarmupRounds; r < settings.Rounds; r++)
            {
                long allocated = GC.GetAllocatedBytesForCurrentThread();
                long start = Stopwatch.GetTimestamp();
                for (int i = 0; i < EmptyDrains; i++)
                {
                    driver.Drain();
                }

                long elapsed = Stopwatch.GetTimestamp() - start;
                long roundBytes = GC.GetAllocatedBytesForCurrentThread() - allocated;
                if (r >= 0)
                {
                    nsPerItem[r] = Ns(elapsed) / EmptyDrains;
                    bytes += roundBytes;
                }
            }

            s_local.Value = null;
            driver.Dispose();
        })
        { IsBackground = true, Name = "ab host" };
        host.Start();
        host.Join();
        yield return new CaseResult("host-drain", "", "ns/item", Stats.Median(nsPerItem));
        yield return new CaseResult("host-drain", "", "B/item", (double)bytes / ((long)EmptyDrains * settings.Rounds));
#else
        throw new NotSupportedException("host-drain needs a library with PriorityContext.AttachToCurrentThread; this side's has none.");
#endif
    }

    /// <summary>
    /// <c>InvokeAsync(work, 0)</c> from the loop, of work that completes at once, <see cref="InvokeCalls"/> times, then a
    /// <c>Yield(0)</c> queued behind them: per call, its start, its run and its completion, and what it allocates (the operation, its
    /// task and, from issue 38 on, the work's flow). Needs a library with <c>InvokeAsync</c> (2026-11-22 on): a side without it is built
    /// without this case (SideBuilder) and fails it with a message.
    /// </summary>
    private static IEnumerable<CaseResult> Invoke(CaseSettings settings, bool asyncLocal)
    {
#if PRIORITYASYNC_INVOKE
        return LoopRounds("invoke", settings, asyncLocal, InvokeCalls, static async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            for (int i = 0; i < InvokeCalls; i++)
            {
                _ = context.InvokeAsync(s_completedWork, 0);
            }

            await context.Yield(0); // behind every call: each has run and completed
        });
#else
        throw new NotSupportedException("invoke needs a library with InvokeAsync; this side's has none.");
#endif
    }

    private static double Ns(long stopwatchTicks) => stopwatchTicks * 1e9 / Stopwatch.Frequency;

    private sealed class StreamState
    {
        public static readonly SendOrPostCallback Last = static state =>
        {
            var self = (StreamState)state!;
            self.End = Stopwatch.GetTimestamp();
            self.Done.Set();
        };

        public readonly ManualResetEventSlim Done = new(false);
        public long Start;
        public long End;
    }
}
