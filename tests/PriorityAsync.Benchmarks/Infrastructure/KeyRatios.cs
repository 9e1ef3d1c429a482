using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using PriorityAsync.Benchmarks.Harness;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// Turns one run's results into the figures a reviewer checks: every measurement, the ratios of PriorityAsync against each baseline
/// (measured in the same run), and each goal of issue 3 with its figure and whether it is met.
/// </summary>
public sealed class KeyRatios
{
    private static readonly CultureInfo s_invariant = CultureInfo.InvariantCulture;

    public KeyRatios(IReadOnlyList<Measurement> measurements, IReadOnlyList<HarnessResult> harness)
        : this(measurements, harness, runs: null, extraGoals: null)
    {
    }

    /// <summary>A report whose figures are the medians of several runs (<paramref name="runs"/>, each judged on its own): a goal is met
    /// only when every run meets it, missed when none does, and "unclear" otherwise. <paramref name="extraGoals"/> come from harnesses
    /// that judge their own spread (null: unclear).</summary>
    public KeyRatios(IReadOnlyList<Measurement> measurements, IReadOnlyList<HarnessResult> harness, IReadOnlyList<KeyRatios>? runs, IReadOnlyList<(string Goal, string Figure, bool? Met)>? extraGoals)
    {
        Measurements = measurements;
        Harness = harness;
        Runs = runs ?? [];
        ExtraGoals = extraGoals ?? [];
        Ratios = BuildRatios().ToList();
        Goals = BuildGoals().ToList();
    }

    /// <summary>The runs behind a several-run report (empty for one run).</summary>
    public IReadOnlyList<KeyRatios> Runs { get; }

    /// <summary>Goals judged by a harness of their own (Harness/CheckpointLongItem.cs).</summary>
    public IReadOnlyList<(string Goal, string Figure, bool? Met)> ExtraGoals { get; }

    public IReadOnlyList<Measurement> Measurements { get; }

    public IReadOnlyList<HarnessResult> Harness { get; }

    /// <summary>Ratio = baseline time / PriorityAsync time: above 1 means PriorityAsync is faster.</summary>
    public IReadOnlyList<(string Benchmark, string Ours, string Baseline, double Ratio)> Ratios { get; }

    public IReadOnlyList<(string Goal, string Figure, bool? Met)> Goals { get; }

    public Measurement? Find(string key) => Measurements.FirstOrDefault(m => m.Key == key);

    public HarnessResult? FindHarness(string group, string name) => Harness.FirstOrDefault(h => h.Group == group && h.Name == name);

    public void Print(TextWriter writer)
    {
        writer.WriteLine();
        if (Measurements.Count > 0)
        {
            writer.WriteLine(Runs.Count > 1
                ? $"## Measurements (BenchmarkDotNet, per operation; median of {Runs.Count} short runs [lowest .. highest run median])"
                : "## Measurements (BenchmarkDotNet, per operation)");
            writer.WriteLine();
            writer.WriteLine("| group | case | median ns/op | mean ns/op | ± sd | M ops/s (median) | B/op |");
            writer.WriteLine("|---|---|---:|---:|---:|---:|---:|");
            foreach (Measurement m in Measurements)
            {
                string name = m.Parameters.Length == 0 ? m.Description : $"{m.Description} [{m.Parameters}]";
                string median = m.RunMediansNs is { Length: > 1 } each
                    ? Invariant($"{m.MedianNs:F1} [{each.Min():F1} .. {each.Max():F1}]")
                    : Invariant($"{m.MedianNs:F1}");
                writer.WriteLine(Invariant($"| {m.Category} | {name} | {median} | {m.MeanNs:F1} | {m.StdDevNs:F1} | {m.OpsPerSecond / 1e6:F2} | {FormatBytes(m.BytesPerOp)} |"));
            }

            writer.WriteLine();
        }

        if (Harness.Count > 0)
        {
            writer.WriteLine("## Custom harnesses (Stopwatch, microseconds)");
            writer.WriteLine();
            writer.WriteLine("| group | case | n | p50 | p90 | p99 | max | items/s | items/s on CPU |");
            writer.WriteLine("|---|---|---:|---:|---:|---:|---:|---:|---:|");
            foreach (HarnessResult h in Harness)
            {
                string throughput = h.ItemsPerSecond is { } ips ? Invariant($"{ips / 1e3:F1} k") : "";
                string onCpu = h.OnCpuItemsPerSecond is { } cpu ? Invariant($"{cpu / 1e3:F1} k") : "";
                writer.WriteLine(Invariant($"| {h.Group} | {h.Name} | {h.Samples} | {h.P50Us:F1} | {h.P90Us:F1} | {h.P99Us:F1} | {h.MaxUs:F1} | {throughput} | {onCpu} |"));
            }

            foreach (HarnessResult h in Harness.Where(h => h.Note is not null))
            {
                writer.WriteLine();
                writer.WriteLine($"- {h.Name}: {h.Note}");
            }

            writer.WriteLine();
        }

        writer.WriteLine("## Key ratios (baseline median time / PriorityAsync median time; > 1 means PriorityAsync is faster)");
        writer.WriteLine();
        writer.WriteLine("| benchmark | PriorityAsync | baseline | ratio |");
        writer.WriteLine("|---|---|---|---:|");
        foreach ((string benchmark, string ours, string baseline, double ratio) in Ratios)
        {
            writer.WriteLine(Invariant($"| {benchmark} | {ours} | {baseline} | {ratio:F2}x |"));
        }

        writer.WriteLine();
        writer.WriteLine("## Goals (issues 3, 22 and 38)");
        writer.WriteLine();
        if (Runs.Count > 1)
        {
            writer.WriteLine($"Each figure is the median of {Runs.Count} short runs; a goal is met only if every run met it, missed if none did, unclear otherwise.");
            writer.WriteLine();
            writer.WriteLine("| goal | median of the runs | each run | verdict |");
            writer.WriteLine("|---|---|---|---|");
        }
        else
        {
            writer.WriteLine("| goal | this run | met? |");
            writer.WriteLine("|---|---|---|");
        }

        for (int i = 0; i < Goals.Count; i++)
        {
            (string goal, string figure, bool? met) = Goals[i];
            if (Runs.Count > 1)
            {
                // The same goals in the same order when every run measured the same benchmarks; else matched by name.
                var perRun = Runs.Select(r => r.Goals.Count == Goals.Count ? r.Goals[i] : r.Goals.FirstOrDefault(g => g.Goal == goal))
                    .Where(g => g.Goal is not null).ToList();
                string each = perRun.Select(g => g.Figure).Distinct().Count() == 1
                    ? "(one harness run)"
                    : string.Join(" / ", perRun.Select(g => g.Figure));
                writer.WriteLine($"| {goal} | {figure} | {each} | {Verdict(met, perRun.Select(g => g.Met).ToList())} |");
            }
            else
            {
                writer.WriteLine($"| {goal} | {figure} | {(met is null ? "n/a" : met.Value ? "met" : "**missed**")} |");
            }
        }

        foreach ((string goal, string figure, bool? met) in ExtraGoals)
        {
            string verdict = met is null ? "unclear (the spread straddles the goal)" : met.Value ? "met" : "**missed**";
            writer.WriteLine(Runs.Count > 1 ? $"| {goal} | {figure} | (rounds, see its table) | {verdict} |" : $"| {goal} | {figure} | {verdict} |");
        }

        writer.WriteLine();
    }

    private IEnumerable<(string, string, string, double)> BuildRatios()
    {
        var pairs = new (string Benchmark, string Ours, string[] Baselines)[]
        {
            ("await (inline switch)", "PriorityAsync_PrioritizeSwitch", new[] { "TaskYield_OnAsyncContext", "TaskYield_OnThreadPool", "TaskYield_OnPriorityContext" }),
            ("await Yield (queued)", "PriorityAsync_Yield", new[] { "TaskYield_OnAsyncContext", "TaskYield_OnThreadPool", "TaskYield_OnPriorityContext" }),
            ("await Prioritize down, higher pending", "PriorityAsync_PrioritizeDownWithHigherPending", new[] { "TaskYield_OnAsyncContext", "TaskYield_OnThreadPool" }),
            ("post + drain", "PriorityAsync_PostDrain", new[] { "ConcurrentQueue_EnqueueDequeue", "AsyncContext_PostDrain", "ThreadPool_UnsafeQueueUserWorkItem" }),
            ("streaming, 1 producer", "PriorityAsync_Post(Producers=1)", new[] { "Channel_SingleReader(Producers=1)", "BlockingCollection_Add(Producers=1)", "AsyncContextThread_Post(Producers=1)" }),
            ("streaming, 2 producers", "PriorityAsync_Post(Producers=2)", new[] { "Channel_SingleReader(Producers=2)", "BlockingCollection_Add(Producers=2)", "AsyncContextThread_Post(Producers=2)" }),
            ("ping-pong", "PriorityAsync_PingPong", new[] { "ThreadPool_ChannelPingPong", "AsyncContext_PingPong" }),
            ("TaskScheduler StartNew + await", "PriorityAsync_StartNew", new[] { "Default_StartNew", "Exclusive_StartNew", "AsyncContext_StartNew" }),
            ("lock, uncontended, off every scheduler", "PriorityLock_OffScheduler", new[] { "SemaphoreSlim_OffScheduler", "SemaphoreSlimFinally_OffScheduler", "AsyncLock_OffScheduler" }),
            ("lock, uncontended, on a loop (plain level code)", "PriorityLock_OnLoop_Plain", new[] { "SemaphoreSlim_OnLoop_Plain", "SemaphoreSlimFinally_OnLoop_Plain" }),
            ("lock, uncontended, on a loop (in a flow its caller awaits)", "PriorityLock_OnLoop_InFlow", new[] { "SemaphoreSlim_OnLoop_Plain", "SemaphoreSlimFinally_OnLoop_Plain" }),
            ("lock, uncontended, on a loop (in a flow nobody awaits)", "PriorityLock_OnLoop_InFlowNotAwaited", new[] { "SemaphoreSlim_OnLoop_Plain", "SemaphoreSlimFinally_OnLoop_Plain" }),
            ("semaphore, uncontended, off every scheduler", "PrioritySemaphore_OffScheduler", new[] { "SemaphoreSlim_OffScheduler" }),
            ("semaphore, uncontended, on a loop (plain level code)", "PrioritySemaphore_OnLoop_Plain", new[] { "SemaphoreSlim_OnLoop_Plain" }),
        };
        foreach ((string benchmark, string oursKey, string[] baselines) in pairs)
        {
            if (Find(oursKey) is not { } ours)
            {
                continue;
            }

            foreach (string baselineKey in baselines)
            {
                if (Find(baselineKey) is { } baseline)
                {
                    yield return (benchmark, ours.Description, baseline.Description, baseline.MedianNs / ours.MedianNs);
                }
            }
        }

        if (FindHarness("Wake-up", "PriorityContextThread Post (loop parked)") is { } wake)
        {
            foreach (HarnessResult other in Harness.Where(h => h.Group == "Wake-up" && h != wake))
            {
                yield return ("wake-up p50", wake.Name, other.Name, other.P50Us / wake.P50Us);
            }
        }

        if (FindHarness("Priority", "PriorityAsync 2 levels (high = 1)") is { } priority)
        {
            foreach (HarnessResult other in Harness.Where(h => h.Group == "Priority" && h != priority))
            {
                yield return ("priority under load: high p99 wait", priority.Name, other.Name, other.P99Us / priority.P99Us);
                yield return ("priority under load: throughput (FIFO time / ours)", priority.Name, other.Name, priority.ItemsPerSecond!.Value / other.ItemsPerSecond!.Value);
            }
        }
    }

    /// <summary>The verdict of a goal over several runs: met only if every run met it; n/a for a diagnostic row.</summary>
    private static string Verdict(bool? aggregate, IReadOnlyList<bool?> perRun)
    {
        if (aggregate is null || perRun.Count == 0 || perRun.Any(m => m is null))
        {
            return "n/a";
        }

        int met = perRun.Count(m => m == true);
        return met == perRun.Count ? "met" : met == 0 ? "**missed**" : $"unclear (met in {met} of {perRun.Count} runs)";
    }

    private IEnumerable<(string, string, bool?)> BuildGoals()
    {
        foreach ((string key, string label) in new[]
        {
            ("PriorityAsync_PrioritizeSwitch", "await Prioritize switch (inline)"),
            ("PriorityAsync_Yield", "await Yield() (queued)"),
        })
        {
            if (Find(key) is { } m)
            {
                yield return ($"{label}: <= 30 ns/op", Invariant($"{m.MedianNs:F1} ns/op"), m.MedianNs <= 30);
                yield return ($"{label}: 0 B/op", $"{FormatBytes(m.BytesPerOp)} B/op", m.BytesPerOp < 0.5);
                if (Find("TaskYield_OnAsyncContext") is { } asyncContext)
                {
                    double ratio = asyncContext.MedianNs / m.MedianNs;
                    yield return ($"{label}: >= 10x faster than AsyncContext", Invariant($"{ratio:F1}x"), ratio >= 10);
                }
            }
        }

        if (Find("PriorityAsync_Yield") is { } yieldQueued && Find("TaskYield_OnThreadPool") is { } poolYield)
        {
            double ratio = yieldQueued.MedianNs / poolYield.MedianNs;
            yield return ("await Yield() (queued): at most Task.Yield() on the thread pool (issue 22)", Invariant($"{ratio:F2}x its time"), ratio <= 1);
        }

        if (Find("PriorityAsync_PostDrain") is { } post)
        {
            yield return ("post + drain: >= 30 M items/s", Invariant($"{post.OpsPerSecond / 1e6:F1} M items/s"), post.OpsPerSecond >= 30e6);
            yield return ("post + drain: 0 B/item", $"{FormatBytes(post.BytesPerOp)} B/item", post.BytesPerOp < 0.5);
        }

        if (Find("PriorityAsync_Post(Producers=1)") is { } stream)
        {
            yield return ("streaming: >= 10 M items/s from one producer", Invariant($"{stream.OpsPerSecond / 1e6:F1} M items/s"), stream.OpsPerSecond >= 10e6);
            if (Find("Channel_SingleReader(Producers=1)") is { } channel)
            {
                yield return ("streaming: ahead of the single-reader Channel (1 producer)", Invariant($"{channel.MedianNs / stream.MedianNs:F2}x"), channel.MedianNs > stream.MedianNs);
            }

            if (Find("PriorityAsync_Post(Producers=2)") is { } stream2 && Find("Channel_SingleReader(Producers=2)") is { } channel2)
            {
                yield return ("streaming: ahead of the single-reader Channel (2 producers)", Invariant($"{channel2.MedianNs / stream2.MedianNs:F2}x"), channel2.MedianNs > stream2.MedianNs);
            }
        }

        if (Find("PriorityAsync_PingPong") is { } pingPong)
        {
            yield return ("ping-pong: >= 10 M hops/s", Invariant($"{pingPong.OpsPerSecond / 1e6:F1} M hops/s"), pingPong.OpsPerSecond >= 10e6);
            if (Find("ThreadPool_ChannelPingPong") is { } pool)
            {
                double ratio = pool.MedianNs / pingPong.MedianNs;
                yield return ("ping-pong: >= 3x the thread-pool Channel", Invariant($"{ratio:F1}x"), ratio >= 3);
            }
        }

        if (FindHarness("Wake-up", "PriorityContextThread Post (loop parked)") is { } wake)
        {
            yield return ("wake-up p50 <= 5 us", Invariant($"p50 {wake.P50Us:F1} us (p99 {wake.P99Us:F1} us)"), wake.P50Us <= 5);
            if (FindHarness("Wake-up", "ManualResetEventSlim Set -> Wait") is { } eventWake)
            {
                double ratio = wake.P50Us / eventWake.P50Us;
                yield return ("wake-up p50 <= 1.2x ManualResetEventSlim's, default options (issue 22)", Invariant($"{ratio:F2}x ({wake.P50Us:F1} vs {eventWake.P50Us:F1} us)"), ratio <= 1.2);
            }
        }

        if (FindHarness("Priority", "PriorityAsync 2 levels (high = 1)") is { } priority)
        {
            yield return (Invariant($"priority: high p99 wait <= one low item ({PriorityUnderLoad.ItemDurationUs} us)"), Invariant($"p99 {priority.P99Us:F1} us"), priority.P99Us <= PriorityUnderLoad.ItemDurationUs);
            if (Harness.FirstOrDefault(h => h.Group == PriorityUnderLoad.UndisturbedGroup) is { } undisturbed)
            {
                yield return ("(diagnostic, not the goal) the same p99 over the waits during which the loop thread kept its core", Invariant($"p99 {undisturbed.P99Us:F1} us (n={undisturbed.Samples})"), null);
            }

            if (FindHarness("Priority", "PriorityAsync 1 level (FIFO)") is { } fifo)
            {
                double cost = 1 - (priority.ItemsPerSecond!.Value / fifo.ItemsPerSecond!.Value);
                yield return ("priority: throughput cost <= 5% vs FIFO (one-level PriorityContext)", Invariant($"{cost * 100:F1}%"), cost <= 0.05);
                if (priority.OnCpuItemsPerSecond is { } ours && fifo.OnCpuItemsPerSecond is { } theirs)
                {
                    yield return ("(diagnostic) the same cost over the time the loop thread had a core", Invariant($"{(1 - (ours / theirs)) * 100:F1}%"), null);
                }
            }

            if (FindHarness("Priority", "AsyncContextThread (FIFO)") is { } asyncContextFifo)
            {
                double cost = 1 - (priority.ItemsPerSecond!.Value / asyncContextFifo.ItemsPerSecond!.Value);
                yield return ("priority: throughput cost <= 5% vs FIFO (AsyncContextThread)", Invariant($"{cost * 100:F1}%"), cost <= 0.05);
                if (priority.OnCpuItemsPerSecond is { } ours && asyncContextFifo.OnCpuItemsPerSecond is { } theirs)
                {
                    yield return ("(diagnostic) the same cost over the time the loop thread had a core", Invariant($"{(1 - (ours / theirs)) * 100:F1}%"), null);
                }
            }
        }

        // Issue 38: the priority lock uncontended, no slower than the locks a user would otherwise pick, and allocation-free; a loop row
        // is judged against SemaphoreSlim on the same loop (the same hand-off per invocation).
        foreach ((string key, string where, string semaphoreKey) in new[]
        {
            ("PriorityLock_OffScheduler", "off every scheduler", "SemaphoreSlim_OffScheduler"),
            ("PriorityLock_OnLoop_Plain", "on a loop, plain level code", "SemaphoreSlim_OnLoop_Plain"),
            ("PriorityLock_OnLoop_InFlow", "on a loop, in a flow its caller awaits", "SemaphoreSlim_OnLoop_Plain"),
            ("PriorityLock_OnLoop_InFlowNotAwaited", "on a loop, in a flow nobody awaits", "SemaphoreSlim_OnLoop_Plain"),
        })
        {
            if (Find(key) is not { } priorityLock)
            {
                continue;
            }

            if (Find(semaphoreKey) is { } semaphore)
            {
                double ratio = priorityLock.MedianNs / semaphore.MedianNs;
                yield return ($"PriorityLock uncontended ({where}): no slower than SemaphoreSlim.WaitAsync+Release", Invariant($"{ratio:F2}x its time ({priorityLock.MedianNs:F1} vs {semaphore.MedianNs:F1} ns)"), ratio <= 1);
            }

            if (Find("AsyncLock_OffScheduler") is { } asyncLock)
            {
                double ratio = priorityLock.MedianNs / asyncLock.MedianNs;
                yield return ($"PriorityLock uncontended ({where}): no slower than AsyncEx AsyncLock (off every scheduler)", Invariant($"{ratio:F2}x its time ({priorityLock.MedianNs:F1} vs {asyncLock.MedianNs:F1} ns)"), ratio <= 1);
            }

            yield return ($"PriorityLock uncontended ({where}): 0 B", $"{FormatBytes(priorityLock.BytesPerOp)} B/op", priorityLock.BytesPerOp < 0.5);
        }

        // Issue 38: what running in a flow costs, against the same code in plain level code (diagnostics: the issue sets no goal).
        foreach ((string key, string plainKey, string label) in new[]
        {
            ("Yield_InInvokeAsync", "Yield_Plain", "await Yield() in InvokeAsync work"),
            ("Yield_InScopeChild", "Yield_Plain", "await Yield() in a scope's child"),
            ("PostRun_InInvokeAsync", "PostRun_Plain", "post + run in InvokeAsync work"),
        })
        {
            if (Find(key) is { } inFlow && Find(plainKey) is { } plain)
            {
                yield return ($"(diagnostic) {label}, against plain level code", Invariant($"{inFlow.MedianNs / plain.MedianNs:F2}x its time ({inFlow.MedianNs:F1} vs {plain.MedianNs:F1} ns; {FormatBytes(inFlow.BytesPerOp)} vs {FormatBytes(plain.BytesPerOp)} B)"), null);
            }
        }

        if (Find("PriorityAsync_StartNew") is { } startNew)
        {
            foreach (string key in new[] { "Default_StartNew", "Exclusive_StartNew", "AsyncContext_StartNew" })
            {
                if (Find(key) is { } other)
                {
                    yield return ($"TaskScheduler: ahead of {other.Description}", Invariant($"{other.MedianNs / startNew.MedianNs:F2}x"), other.MedianNs > startNew.MedianNs);
                }
            }
        }
    }

    private static string FormatBytes(double? bytes) => bytes switch
    {
        null => "?",
        < 0.005 => "0",
        < 10 => Invariant($"{bytes:F2}"),
        _ => Invariant($"{bytes:F0}"),
    };

    private static string Invariant(FormattableString value) => value.ToString(s_invariant);
}
