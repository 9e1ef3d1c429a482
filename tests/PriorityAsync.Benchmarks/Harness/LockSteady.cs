using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// The uncontended lock as an application uses it: one lock in one place per process, in steady state. <see cref="LockBenchmarks"/>
/// and <see cref="LockCpu"/> run every place in one process, so the code the JIT makes for the lock is shaped by all of them (a
/// profile trained off every scheduler leaves the loop's region code cold); here each (place, lock) runs in a process of its own for a
/// few seconds after a warm-up, and the figure is its wall time per acquire + release pair. Beside the three locks as the issue names
/// them, two shapes that tell the pair from the code around it: the lock's releaser disposed without a <c>using</c> (whose try/finally
/// costs the async method a few ns), and <see cref="SemaphoreSlim"/> released in a <c>finally</c>, as it is meant to be used; and
/// beside the synchronous section, one that awaits inside (<c>await Priority.Yield()</c>), where the region claims its holder.
/// </summary>
public static class LockSteady
{
    private const int Pairs = 200_000;
    private static readonly string[] s_places =
    [
        "off every scheduler", "on a loop, plain level code", "on a loop, in a flow (InvokeAsync work)",
        "on a loop, in a flow, `await Yield()` inside",
    ];
    private static readonly string[] s_locks =
    [
        "PriorityLock", "PrioritySemaphore", "SemaphoreSlim", "PriorityLock, Dispose without using", "SemaphoreSlim, Release in a finally",
    ];

    /// <summary>Runs every (place, lock) <paramref name="rounds"/> times, each in a child process for <paramref name="seconds"/>, and
    /// prints the table.</summary>
    public static void Run(int rounds, double seconds, TextWriter output)
    {
        var figures = new Dictionary<(int Place, int Lock), List<double>>();
        string loadBefore = LockCpu.LoadAverage();
        DateTime start = DateTime.UtcNow;
        for (int round = 0; round < rounds; round++)
        {
            for (int place = 0; place < s_places.Length; place++)
            {
                for (int lockIndex = 0; lockIndex < s_locks.Length; lockIndex++)
                {
                    double ns = RunChild(place, lockIndex, seconds);
                    (figures.TryGetValue((place, lockIndex), out List<double>? list) ? list : figures[(place, lockIndex)] = []).Add(ns);
                }
            }
        }

        output.WriteLine();
        output.WriteLine($"## The uncontended lock, one place per process ({rounds} rounds of {seconds:0.#} s a case, {start:yyyy-MM-dd HH:mm:ss}-{DateTime.UtcNow:HH:mm:ss} UTC, load {loadBefore} before, {LockCpu.LoadAverage()} after)");
        output.WriteLine();
        output.WriteLine("| place | " + string.Join(" | ", s_locks.Select(name => $"{name} ns per pair")) + " | PriorityLock vs SemaphoreSlim | PrioritySemaphore vs SemaphoreSlim | PriorityLock vs SemaphoreSlim in a finally |");
        output.WriteLine("|---|" + string.Concat(s_locks.Select(_ => "---:|")) + "---:|---:|---:|");
        for (int place = 0; place < s_places.Length; place++)
        {
            double baseline = Median(figures[(place, 2)]);
            output.WriteLine(
                $"| {s_places[place]} | " + string.Join(" | ", Enumerable.Range(0, s_locks.Length).Select(l => Range(figures[(place, l)])))
                + $" | {Median(figures[(place, 0)]) / baseline:F2}x | {Median(figures[(place, 1)]) / baseline:F2}x"
                + $" | {Median(figures[(place, 0)]) / Median(figures[(place, 4)]):F2}x |");
        }
    }

    /// <summary>In the child: runs one lock in one place for <paramref name="seconds"/> after a warm-up, and prints "ns &lt;figure&gt;".</summary>
    public static void RunOne(int place, int lockIndex, double seconds, TextWriter output)
    {
        var priorityLock = new PriorityLock { Name = "bench" };
        var prioritySemaphore = new PrioritySemaphore(1, 1);
        var semaphore = new SemaphoreSlim(1, 1);
        bool awaitInside = place == 3;
        int pairsPerRun = awaitInside ? Pairs / 10 : Pairs;
        Func<Task> pairs = lockIndex switch
        {
            0 => async () =>
            {
                for (int i = 0; i < pairsPerRun; i++)
                {
                    using (await priorityLock.LockAsync())
                    {
                        if (awaitInside)
                        {
                            await Priority.Yield(); // the section queues an item: its region claims and links its holder
                        }
                    }
                }
            },
            1 => async () =>
            {
                for (int i = 0; i < pairsPerRun; i++)
                {
                    await prioritySemaphore.WaitAsync();
                    if (awaitInside)
                    {
                        await Priority.Yield();
                    }

                    prioritySemaphore.Release();
                }
            },
            3 => async () =>
            {
                for (int i = 0; i < pairsPerRun; i++)
                {
                    PriorityLock.Releaser releaser = await priorityLock.LockAsync(); // the pair without the using's try/finally
                    if (awaitInside)
                    {
                        await Priority.Yield();
                    }

                    releaser.Dispose();
                }
            },
            4 => async () =>
            {
                for (int i = 0; i < pairsPerRun; i++)
                {
                    await semaphore.WaitAsync();
                    try
                    {
                        if (awaitInside)
                        {
                            await Priority.Yield();
                        }
                    }
                    finally
                    {
                        semaphore.Release();
                    }
                }
            },
            _ => async () =>
            {
                for (int i = 0; i < pairsPerRun; i++)
                {
                    await semaphore.WaitAsync();
                    if (awaitInside)
                    {
                        await Priority.Yield();
                    }

                    semaphore.Release();
                }
            },
        };

        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench-lock-steady" });
        Func<Task> run = place switch
        {
            0 => pairs,
            1 => () =>
            {
                var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                loop.Context.GetSynchronizationContext(1).Post(_ => Complete(pairs(), done), null);
                return done.Task;
            },
            _ => () => loop.Context.InvokeAsync(pairs, 1).Task,
        };

        for (int i = 0; i < 100; i++)
        {
            run().GetAwaiter().GetResult(); // tier 1 with this place's profile
        }

        long count = 0;
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            run().GetAwaiter().GetResult();
            count += pairsPerRun;
        }

        output.WriteLine(FormattableString.Invariant($"ns {clock.Elapsed.TotalNanoseconds / count:F2}"));
    }

    private static void Complete(Task pairs, TaskCompletionSource done)
    {
        if (pairs.IsCompletedSuccessfully)
        {
            done.SetResult();
        }
        else
        {
            pairs.ContinueWith(t => done.SetException(t.Exception ?? new Exception("The pairs did not complete at once.")), TaskScheduler.Default);
        }
    }

    private static double RunChild(int place, int lockIndex, double seconds)
    {
        ProcessStartInfo start = Reexec.ThisProgram(["--lock-steady-one", $"{place}", $"{lockIndex}", seconds.ToString(CultureInfo.InvariantCulture)]);
        start.RedirectStandardOutput = true;
        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {start.FileName}.");
        string text = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        string? line = text.Split('\n').Select(l => l.Trim()).LastOrDefault(l => l.StartsWith("ns ", StringComparison.Ordinal));
        return process.ExitCode == 0 && line is not null
            ? double.Parse(line[3..], CultureInfo.InvariantCulture)
            : throw new InvalidOperationException($"The child for {s_locks[lockIndex]} {s_places[place]} failed (exit {process.ExitCode}): {text}");
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
    }

    private static string Range(List<double> values) =>
        values.Count == 1 ? $"{values[0]:F1}" : $"{Median(values):F1} ({values.Min():F1}-{values.Max():F1})";
}
