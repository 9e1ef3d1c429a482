using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Nito.AsyncEx;
using static PriorityAsync.Priority;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Issue 38's numbers in real time (<c>--inversion</c>): the two priority-inversion scenarios whose bounds
/// <c>tests/PriorityAsync.Tests/Escalation/InversionScenarioTests.cs</c> proves on a virtual clock, run on the machine's clock. Level 0
/// holds a lock across a 2 ms <c>Task.Delay</c> (an I/O call), level 1 floods the scheduler with 5 ms CPU items (a spin on the
/// <see cref="Stopwatch"/>, then <c>await Yield()</c>), and a keeper at level 2 needs, every 50 ms, either the same lock or work it
/// starts at level 0 with <c>InvokeAsync</c> (an awaited 2 ms <c>Task.Delay</c>). Strict policy. Each case runs on a
/// <see cref="PriorityContext"/> (one flood producer) and on a <see cref="PriorityThreadPool"/> of 2 threads (two producers, one per
/// thread).
/// </summary>
/// <remarks>
/// <para>The keeper's wait runs from just before it asks to just after it has what it asked for. Figures: the rounds (keeper waits),
/// how many found the lock taken (not granted at once), the worst wait, p99 and median (nearest rank, all runs pooled), and how much
/// of its spin time the flood lost its core (gaps of more than <see cref="GapMs"/> ms between two clock readings): on a shared machine
/// a wait that overlaps such a gap measures the machine, not the scheduler.</para>
/// <para>The baselines are the same keeper with <see cref="SemaphoreSlim"/> and Nito.AsyncEx's <see cref="AsyncLock"/> (5.1.2) for the
/// lock, and with the plain <see cref="Task"/> of the same <c>InvokeAsync</c> call for the awaited work: neither tells the scheduler
/// who waits for whom, so the holder waits behind the flood.</para>
/// </remarks>
public static class Inversion
{
    /// <summary>The case names <c>--inversion-cases</c> takes (comma-separated); all of them unless it is given.</summary>
    public static readonly string[] CaseNames = ["priority-lock", "semaphoreslim", "asynclock", "priority-task", "plain-task"];

    /// <summary>The issue's goal for the keeper's worst wait with PriorityLock and an awaited PriorityTask, in milliseconds.</summary>
    public const double GoalMs = 15;

    /// <summary>A jump of more than this between two clock readings in a spin is counted as the flood's thread losing its core.</summary>
    public const double GapMs = 0.5;

    private static readonly TimeSpan Critical = TimeSpan.FromMilliseconds(2);
    private static readonly TimeSpan Medium = TimeSpan.FromMilliseconds(5);
    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(50);
    private static readonly TimeSpan WarmUp = TimeSpan.FromMilliseconds(500);

    /// <summary>The awaited work of the second scenario: an I/O call whose continuation runs on the scheduler at the work's level.</summary>
    private static readonly Func<Task> s_io = static async () => await Task.Delay(Critical);

    /// <summary>Runs every case of <paramref name="cases"/> (all when null) on the loop and on the pool, <paramref name="runs"/> times
    /// each, the cases interleaved, after a short unreported warm-up of each; prints the table and the goals.</summary>
    public static void Run(TextWriter output, TimeSpan length, int runs, IReadOnlyCollection<string>? cases = null)
    {
        ArgumentNullException.ThrowIfNull(output);
        string[] selected = CaseNames.Where(name => cases is null || cases.Contains(name)).ToArray();
        output.WriteLine(FormattableString.Invariant(
            $"== Priority inversion (issue 38): {length.TotalSeconds:F1} s per run, {runs} run(s), strict policy; critical section {Critical.TotalMilliseconds} ms of Task.Delay, flood items {Medium.TotalMilliseconds} ms of spin, keeper every {Period.TotalMilliseconds} ms =="));
        var results = new Dictionary<(string Case, bool Pool), List<Result>>();
        foreach (bool pool in new[] { false, true })
        {
            foreach (string name in selected)
            {
                _ = RunOne(name, pool, WarmUp); // JIT and first-use costs (a lock's region, the pool's threads) stay out of the figures
                results[(name, pool)] = [];
            }
        }

        for (int run = 0; run < runs; run++)
        {
            foreach (bool pool in new[] { false, true })
            {
                foreach (string name in selected)
                {
                    Result result = RunOne(name, pool, length);
                    results[(name, pool)].Add(result);
                    output.WriteLine(FormattableString.Invariant(
                        $"  run {run + 1}: {name} on the {SchedulerName(pool)}: {result.Waits.Length} rounds, worst {result.Waits.DefaultIfEmpty().Max():F1} ms"));
                }
            }
        }

        Report(output, selected, results);
    }

    private static string SchedulerName(bool pool) => pool ? "pool (2 threads)" : "loop";

    private static Result RunOne(string name, bool pool, TimeSpan length)
    {
        var scenario = new Scenario(name, length, producers: pool ? 2 : 1);
        if (pool)
        {
            using var threads = new PriorityThreadPool(new PriorityThreadPoolOptions { Levels = 3, ThreadCount = 2, Name = "inversion" });
            Task done = threads.InvokeAsync(scenario.RunAsync, 0).Task;
            if (!done.Wait(length + TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"The inversion scenario '{name}' on the pool did not end within {length.TotalSeconds + 60} s.");
            }

            done.GetAwaiter().GetResult();
        }
        else
        {
            PriorityContext.Run(scenario.RunAsync, new PriorityContextOptions { Levels = 3, Name = "inversion" });
        }

        return scenario.Result();
    }

    private static void Report(TextWriter output, string[] selected, Dictionary<(string Case, bool Pool), List<Result>> results)
    {
        output.WriteLine();
        output.WriteLine("### The keeper's wait (ms; p99 and median over every run's rounds, nearest rank)");
        output.WriteLine();
        output.WriteLine("| scenario | the keeper waits on | scheduler | rounds | found the lock taken | worst | p99 | median | worst per run | flood descheduled (share of its spin, longest gap) |");
        output.WriteLine("|---|---|---|---:|---:|---:|---:|---:|---|---|");
        var goals = new List<(string Goal, string Figure, bool Met)>();
        foreach (bool pool in new[] { false, true })
        {
            foreach (string name in selected)
            {
                List<Result> runs = results[(name, pool)];
                double[] waits = runs.SelectMany(r => r.Waits).Order().ToArray();
                double worst = waits.DefaultIfEmpty().Max();
                string contended = name is "priority-task" or "plain-task" ? "-" : runs.Sum(r => r.Contended).ToString(System.Globalization.CultureInfo.InvariantCulture);
                double lostShare = runs.Sum(r => r.LostMs) / runs.Sum(r => r.SpunMs);
                double longestGap = runs.Max(r => r.LongestGapMs);
                output.WriteLine(FormattableString.Invariant(
                    $"| {Scenario.Of(name)} | {Scenario.Describe(name)} | {SchedulerName(pool)} | {waits.Length} | {contended} | {worst:F1} | {Percentile(waits, 0.99):F1} | {Percentile(waits, 0.5):F1} | {string.Join(", ", runs.Select(r => r.Waits.DefaultIfEmpty().Max().ToString("F1", System.Globalization.CultureInfo.InvariantCulture)))} | {100 * lostShare:F1}%, {longestGap:F1} ms |"));
                if (name is "priority-lock" or "priority-task")
                {
                    goals.Add((FormattableString.Invariant($"{Scenario.Describe(name)} on the {SchedulerName(pool)}: worst wait <= {GoalMs} ms"), FormattableString.Invariant($"{worst:F1} ms"), worst <= GoalMs && waits.Length > 0));
                }
            }
        }

        output.WriteLine();
        output.WriteLine("### Goals (issue 38; the worst wait of every run)");
        output.WriteLine();
        output.WriteLine("| goal | figure | met? |");
        output.WriteLine("|---|---|---|");
        foreach ((string goal, string figure, bool met) in goals)
        {
            output.WriteLine($"| {goal} | {figure} | {(met ? "met" : "**missed**")} |");
        }
    }

    private static double Percentile(double[] sorted, double p) =>
        sorted.Length == 0 ? double.NaN : sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];

    private readonly record struct Result(double[] Waits, int Contended, double SpunMs, double LostMs, double LongestGapMs);

    /// <summary>One run of one case: the roles, started from the scheduler's entry, and what they measured.</summary>
    private sealed class Scenario(string name, TimeSpan length, int producers)
    {
        private static readonly long s_gapTicks = (long)(GapMs * Stopwatch.Frequency / 1000);

        private readonly PriorityLock _priorityLock = new() { Name = "client" };
        private readonly SemaphoreSlim _semaphore = new(1, 1);
        private readonly AsyncLock _asyncLock = new();
        private readonly List<double> _waits = [];
        private long _end;
        private int _contended;
        private long _spunTicks;
        private long _lostTicks;
        private long _longestGapTicks;

        public static string Of(string name) => name is "priority-task" or "plain-task" ? "awaited work" : "lock";

        public static string Describe(string name) => name switch
        {
            "priority-lock" => "`PriorityLock`",
            "semaphoreslim" => "`SemaphoreSlim`",
            "asynclock" => "AsyncEx `AsyncLock`",
            "priority-task" => "`await InvokeAsync(...)` (`PriorityTask`)",
            "plain-task" => "`Task t = InvokeAsync(...); await t`",
            _ => throw new ArgumentException($"Unknown inversion case '{name}'. Use {string.Join(", ", CaseNames)}."),
        };

        private bool Ended => Stopwatch.GetTimestamp() >= Volatile.Read(ref _end);

        /// <summary>The scheduler's entry: starts the holder (lock cases), the flood and the keeper, and waits for them all (their plain
        /// tasks: awaiting the PriorityTasks from here would raise them).</summary>
        public async Task RunAsync()
        {
            _ = Describe(name); // an unknown name fails before anything starts
            Volatile.Write(ref _end, Stopwatch.GetTimestamp() + (long)(length.TotalSeconds * Stopwatch.Frequency));
            PriorityScheduler scheduler = CurrentScheduler!;
            var roles = new List<Task>();
            if (Of(name) == "lock")
            {
                roles.Add(scheduler.Scope.StartAsync(_ => HoldAsync(), level: 0).Task);
            }

            for (int i = 0; i < producers; i++)
            {
                roles.Add(scheduler.Scope.StartAsync(_ => FloodAsync(), level: 1).Task);
            }

            roles.Add(scheduler.Scope.StartAsync(_ => KeepAsync(scheduler), level: 2).Task);
            await Task.WhenAll(roles);
        }

        public Result Result()
        {
            double ms = 1000.0 / Stopwatch.Frequency;
            return new Result([.. _waits], _contended, _spunTicks * ms, _lostTicks * ms, _longestGapTicks * ms);
        }

        /// <summary>Level 0: takes the lock and holds it across an I/O call, again and again.</summary>
        private async Task HoldAsync()
        {
            while (!Ended)
            {
                switch (name)
                {
                    case "priority-lock":
                        using (await _priorityLock.LockAsync())
                        {
                            await Task.Delay(Critical); // the I/O call, with the lock held: it resumes in the lock's region
                        }

                        break;
                    case "semaphoreslim":
                        await _semaphore.WaitAsync();
                        try
                        {
                            await Task.Delay(Critical);
                        }
                        finally
                        {
                            _semaphore.Release();
                        }

                        break;
                    default:
                        using (await _asyncLock.LockAsync())
                        {
                            await Task.Delay(Critical);
                        }

                        break;
                }
            }
        }

        /// <summary>Level 1: 5 ms CPU items back to back until the end, each followed by a Yield, which the strict policy always runs
        /// before anything at level 0.</summary>
        private async Task FloodAsync()
        {
            await Delay(TimeSpan.FromMilliseconds(1)); // level 0 takes the lock first, as in the issue's run
            while (!Ended)
            {
                Spin();
                await Yield();
            }
        }

        /// <summary>Level 2: every 50 ms, needs the lock or the work; records how long that took.</summary>
        private async Task KeepAsync(PriorityScheduler scheduler)
        {
            while (!Ended)
            {
                await Delay(Period);
                long asked = Stopwatch.GetTimestamp();
                bool contended = await NeedAsync(scheduler);
                double waited = Stopwatch.GetElapsedTime(asked).TotalMilliseconds;
                _waits.Add(waited); // only the keeper writes, one round at a time; read after the run
                _contended += contended ? 1 : 0;
            }
        }

        /// <summary>Takes and releases the lock, or starts the work and awaits it; returns whether it had to wait (the lock was not
        /// granted at once; the work is always waited for).</summary>
        private async Task<bool> NeedAsync(PriorityScheduler scheduler)
        {
            bool contended;
            switch (name)
            {
                case "priority-lock":
                    PriorityLock.LockAwaitable locking = _priorityLock.LockAsync();
                    contended = !locking.IsCompleted;
                    using (await locking)
                    {
                    }

                    break;
                case "semaphoreslim":
                    Task waiting = _semaphore.WaitAsync();
                    contended = !waiting.IsCompleted;
                    await waiting;
                    _semaphore.Release();
                    break;
                case "asynclock":
                    Task<IDisposable> asking = _asyncLock.LockAsync().AsTask();
                    contended = !asking.IsCompleted;
                    using (await asking)
                    {
                    }

                    break;
                case "priority-task":
                    PriorityTask work = scheduler.InvokeAsync(s_io, level: 0);
                    contended = !work.IsCompleted;
                    await work; // the PriorityTask: the work runs at the keeper's level until it completes
                    break;
                default:
                    Task plain = scheduler.InvokeAsync(s_io, level: 0);
                    contended = !plain.IsCompleted;
                    await plain; // the plain Task: nothing tells the scheduler that it is awaited
                    break;
            }

            return contended;
        }

        /// <summary>One CPU item: spins on the clock for <see cref="Medium"/>, counting the jumps between readings as core lost.</summary>
        private void Spin()
        {
            long start = Stopwatch.GetTimestamp();
            long until = start + (long)(Medium.TotalSeconds * Stopwatch.Frequency);
            long last = start;
            long lost = 0;
            long longest = 0;
            long now;
            do
            {
                now = Stopwatch.GetTimestamp();
                long step = now - last;
                if (step > s_gapTicks)
                {
                    lost += step;
                    longest = Math.Max(longest, step);
                }

                last = now;
            }
            while (now < until);

            // Two producers run on two threads of the pool: the totals are shared.
            Interlocked.Add(ref _spunTicks, now - start);
            Interlocked.Add(ref _lostTicks, lost);
            long seen = Volatile.Read(ref _longestGapTicks);
            while (longest > seen && Interlocked.CompareExchange(ref _longestGapTicks, longest, seen) is var actual && actual != seen)
            {
                seen = actual;
            }
        }
    }
}
