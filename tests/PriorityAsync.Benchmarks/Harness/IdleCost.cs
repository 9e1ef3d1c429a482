using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// What an idle process pays for the library: the CPU time of a whole process (Linux <c>CLOCK_PROCESS_CPUTIME_ID</c>, every thread,
/// those that ended too) over a window, with idle schedulers in it, against the same program that never touches the library. Each
/// case is a child process of its own (this program with <c>--idle-child</c>), started one after another, warmed up (JIT, the start's
/// threads), then left alone for the window. Run with <c>--idle-cost [seconds]</c> (docs/benchmarks.md, "An idle process").
/// </summary>
public static class IdleCost
{
    /// <summary>The cases, in the order they run: the baseline first.</summary>
    public static readonly string[] CaseNames = ["none", "loop", "loops100", "pool"];

    private const int RusageSelf = 0;

    public static void Run(int windowSeconds, int warmupSeconds, int rounds, IReadOnlyCollection<string>? cases)
    {
        string[] selected = cases?.ToArray() ?? CaseNames;
        Console.WriteLine($"== An idle process: its CPU time over {windowSeconds} s after {warmupSeconds} s of warm-up, {rounds} round(s); load average {LoadAverage()} ==");
        var results = new Dictionary<string, List<ChildResult>>();
        for (int round = 0; round < rounds; round++)
        {
            foreach (string name in selected)
            {
                ChildResult result = RunChild(name, windowSeconds, warmupSeconds);
                (results.TryGetValue(name, out List<ChildResult>? list) ? list : results[name] = []).Add(result);
                Console.WriteLine($"  round {round + 1} {name}: {result.CpuMs:F2} ms of CPU, {result.VoluntarySwitches} voluntary context switches; library loaded: {result.LibraryLoaded}; threads that ran: {string.Join(", ", result.Threads.Select(t => t.CpuMs is { } ms ? $"{t.Name} {ms:F2} ms" : $"{t.Name} (ended)"))}");
            }
        }

        double baseline = results.TryGetValue("none", out List<ChildResult>? none) ? Median(none.Select(r => r.CpuMs)) : double.NaN;
        Console.WriteLine();
        Console.WriteLine($"| case | CPU over {windowSeconds} s (median of {rounds}) | share of one core | minus the baseline | voluntary context switches |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        foreach (string name in selected)
        {
            List<ChildResult> runs = results[name];
            double cpu = Median(runs.Select(r => r.CpuMs));
            double share = cpu / (windowSeconds * 1000.0) * 100;
            double extra = (cpu - baseline) / (windowSeconds * 1000.0) * 100;
            string minus = name == "none" || double.IsNaN(baseline) ? "-" : $"{extra:+0.0000;-0.0000;0.0000} %";
            Console.WriteLine($"| {Describe(name)} | {cpu:F2} ms | {share:F4} % | {minus} | {Median(runs.Select(r => (double)r.VoluntarySwitches)):F0} |");
        }

        Console.WriteLine($"(load average after: {LoadAverage()})");
    }

    /// <summary>The child: sets up its case, warms up, measures the window, prints one JSON line.</summary>
    public static int Child(string name, int windowSeconds, int warmupSeconds)
    {
        IDisposable? schedulers = name == "none" ? null : StartSchedulers(name);

        // The measurement's own code at its last tier before the window: read once, the framework's methods it calls would be
        // recompiled (tiered, profile-guided) by the JIT's background thread during the window, a dozen milliseconds of CPU.
        for (int i = 0; i < 100; i++)
        {
            _ = ThreadTimes();
            _ = ProcessCpuNanoseconds();
            _ = VoluntarySwitches();
            Thread.Sleep(50);
        }

        Thread.Sleep(TimeSpan.FromSeconds(warmupSeconds));

        Dictionary<int, (string Name, long Ns)> threads0 = ThreadTimes();
        long cpu0 = ProcessCpuNanoseconds();
        long switches0 = VoluntarySwitches();
        Thread.Sleep(TimeSpan.FromSeconds(windowSeconds));
        long cpu1 = ProcessCpuNanoseconds();
        long switches1 = VoluntarySwitches();
        Dictionary<int, (string Name, long Ns)> threads1 = ThreadTimes();

        // A thread that ended in the window is named too: its time in the window is in the process's clock, not in the list.
        var ran = threads1
            .Select(t => (t.Value.Name, Ns: t.Value.Ns - (threads0.TryGetValue(t.Key, out var before) ? before.Ns : 0)))
            .Where(t => t.Ns > 0)
            .OrderByDescending(t => t.Ns)
            .Select(t => new ThreadResult(t.Name, t.Ns / 1e6))
            .Concat(threads0.Where(t => !threads1.ContainsKey(t.Key)).Select(t => new ThreadResult(t.Value.Name, null)))
            .ToList();
        bool loaded = AppDomain.CurrentDomain.GetAssemblies().Any(a => a.GetName().Name == "PriorityAsync");
        var result = new ChildResult(name, (cpu1 - cpu0) / 1e6, switches1 - switches0, loaded, ran);
        Console.WriteLine("RESULT " + JsonSerializer.Serialize(result));
        schedulers?.Dispose();
        return 0;
    }

    private static string Describe(string name) => name switch
    {
        "none" => "the program without the library (baseline)",
        "loop" => "1 idle PriorityContextThread",
        "loops100" => "100 idle PriorityContextThreads",
        "pool" => $"1 idle PriorityThreadPool ({Environment.ProcessorCount} threads)",
        _ => name,
    };

    // In its own method, so that the baseline's child never loads the library (the JIT loads an assembly when it compiles a method
    // that names its types).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static IDisposable StartSchedulers(string name)
    {
        var started = new List<IDisposable>();
        switch (name)
        {
            case "loop":
            case "loops100":
                for (int i = 0; i < (name == "loop" ? 1 : 100); i++)
                {
                    var loop = new PriorityContextThread(new PriorityContextOptions { Name = $"idle-{i}" });
                    loop.Context.InvokeAsync(static () => Task.CompletedTask).Task.Wait(); // it has run an item, then goes idle
                    started.Add(loop);
                }

                break;
            case "pool":
                var pool = new PriorityThreadPool(new PriorityThreadPoolOptions { Name = "idle-pool" });
                pool.InvokeAsync(static () => Task.CompletedTask).Task.Wait();
                started.Add(pool);
                break;
            default:
                throw new ArgumentException($"Unknown idle case '{name}'. Cases: {string.Join(", ", CaseNames)}.");
        }

        return new Disposables(started);
    }

    private static ChildResult RunChild(string name, int windowSeconds, int warmupSeconds)
    {
        string host = Environment.ProcessPath ?? throw new InvalidOperationException("The path of this process is unknown.");
        var start = new ProcessStartInfo(host) { UseShellExecute = false, RedirectStandardOutput = true };
        if (Path.GetFileNameWithoutExtension(host).Equals("dotnet", StringComparison.OrdinalIgnoreCase))
        {
            start.ArgumentList.Add(typeof(IdleCost).Assembly.Location);
        }

        foreach (string argument in new[] { "--idle-child", name, windowSeconds.ToString(CultureInfo.InvariantCulture), warmupSeconds.ToString(CultureInfo.InvariantCulture) })
        {
            start.ArgumentList.Add(argument);
        }

        using Process child = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {host}.");
        string output = child.StandardOutput.ReadToEnd();
        child.WaitForExit();
        string line = output.Split('\n').FirstOrDefault(l => l.StartsWith("RESULT ", StringComparison.Ordinal))
            ?? throw new InvalidOperationException($"The '{name}' child printed no result (exit code {child.ExitCode}): {output}");
        return JsonSerializer.Deserialize<ChildResult>(line["RESULT ".Length..])!;
    }

    private static long ProcessCpuNanoseconds() => ThreadCpu.ProcessNanoseconds();

    private static long VoluntarySwitches() => GetRusage(RusageSelf, out Rusage usage) == 0 ? usage.VoluntarySwitches : -1;

    /// <summary>Every thread of this process: its name and CPU nanoseconds (/proc/self/task/*/schedstat).</summary>
    private static Dictionary<int, (string Name, long Ns)> ThreadTimes()
    {
        var times = new Dictionary<int, (string, long)>();
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                int id = int.Parse(Path.GetFileName(task), CultureInfo.InvariantCulture);
                string comm = File.ReadAllText(Path.Combine(task, "comm")).Trim();
                long ns = long.Parse(File.ReadAllText(Path.Combine(task, "schedstat")).Split(' ')[0], CultureInfo.InvariantCulture);
                times[id] = (comm, ns);
            }
            catch (IOException)
            {
                // the thread ended while we looked
            }
        }

        return times;
    }

    private static string LoadAverage() => File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3)) : "?";

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = values.Order().ToArray();
        return sorted.Length == 0 ? double.NaN : sorted[sorted.Length / 2];
    }

    [DllImport("libc", EntryPoint = "getrusage")]
    private static extern int GetRusage(int who, out Rusage usage);

    // struct rusage on 64-bit Linux: two timevals, then 14 longs; ru_nvcsw is the 13th of them.
    [StructLayout(LayoutKind.Sequential)]
    private struct Rusage
    {
        public long UserSeconds;
        public long UserMicroseconds;
        public long SystemSeconds;
        public long SystemMicroseconds;
        public long MaxRss;
        public long Ixrss;
        public long Idrss;
        public long Isrss;
        public long MinorFaults;
        public long MajorFaults;
        public long Swaps;
        public long BlocksIn;
        public long BlocksOut;
        public long MessagesSent;
        public long MessagesReceived;
        public long Signals;
        public long VoluntarySwitches;
        public long InvoluntarySwitches;
    }

    private sealed class Disposables(List<IDisposable> items) : IDisposable
    {
        public void Dispose()
        {
            foreach (IDisposable item in items)
            {
                item.Dispose();
            }
        }
    }

    /// <summary>One child's figures.</summary>
    public sealed record ChildResult(string Case, double CpuMs, long VoluntarySwitches, bool LibraryLoaded, List<ThreadResult> Threads);

    /// <summary>A thread that ran in the window, and for how long (null: it ended in the window).</summary>
    public sealed record ThreadResult(string Name, double? CpuMs);
}
