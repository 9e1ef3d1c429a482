using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Environments;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.CsProj;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Perfolizer.Horology;
using PriorityAsync.Benchmarks;
using PriorityAsync.Benchmarks.Harness;
using PriorityAsync.Benchmarks.Infrastructure;
using Measurement = PriorityAsync.Benchmarks.Infrastructure.Measurement;

// Usage (from the repository root):
//   dotnet run -c Release --project tests/PriorityAsync.Benchmarks                 full run (out-of-process, ~3-4 min on 2 cores)
//   dotnet run -c Release --project tests/PriorityAsync.Benchmarks -- --quick      quick check (in-process, 3 short runs, ~3 min)
// Options: --filter <glob> (BenchmarkDotNet filter, e.g. "*PingPong*"), --no-bdn, --no-harness, --svg <path> (default
// docs/benchmarks.svg for a full run from the repository root; quick and partial runs write BenchmarkDotNet.Artifacts/), --samples <n> (latency samples per variant), --results-from <json>
// (print the tables and redraw the chart from a saved run's BenchmarkDotNet.Artifacts/results.json, measuring nothing),
// --policies [--policy-seconds <n>] [--policies-svg <path>] (the policies under saturation only: Harness/PolicyHarness.cs),
// --threads [rounds] [--threads-cases cpu,flood,streaming] (the priority scheduler on several threads against the thread pool:
// Threads/ThreadsHarness.cs; --threads-cases runs only the cases named),
// --inversion [runs] [--inversion-seconds <n>] [--inversion-cases <a,b>] (priority inversion in real time: Harness/Inversion.cs),
// --idle-cost [seconds] [--idle-warmup <s>] [--idle-rounds <n>] [--idle-cases none,loop,loops100,pool] (an idle process's CPU with
// and without the library: Harness/IdleCost.cs).
if (args is ["--idle-child", string idleCase, string idleWindow, string idleWarmup])
{
    // One case of --idle-cost, in a process of its own; first, so that the baseline's process does nothing else.
    return IdleCost.Child(idleCase, int.Parse(idleWindow, System.Globalization.CultureInfo.InvariantCulture), int.Parse(idleWarmup, System.Globalization.CultureInfo.InvariantCulture));
}

var options = BenchOptions.Parse(args);
if (options.Quick && options.Reexec && Environment.GetEnvironmentVariable("DOTNET_ReadyToRun") != "0")
{
    // A quick run is in-process: its code is the process's. With the framework's precompiled (ReadyToRun) code the same benchmark
    // differed by up to 2x between benchmark classes and runs (its tier-up timing); run again without it, and with tier-1 code
    // sooner. --no-reexec keeps this process.
    return Reexec.WithStableJit(args);
}

if (options.ThreadsRounds > 0)
{
    // The priority scheduler on several threads against the thread pool and ConcurrentExclusiveSchedulerPair (issue 20).
    PriorityAsync.Benchmarks.Threads.ThreadsHarness.Run(Console.Out, options.ThreadsRounds, options.ThreadsCases);
    return 0;
}

if (options.InversionRuns > 0)
{
    // Priority inversion in real time (issue 38): a keeper that needs a lock or awaited work that level 0 holds, under a level-1 flood.
    Inversion.Run(Console.Out, TimeSpan.FromSeconds(options.InversionSeconds), options.InversionRuns, options.InversionCases);
    return 0;
}

if (options.Policies)
{
    // The policies under saturation (issue 12, docs/benchmarks.md "Policies"): a harness of its own, nothing else runs.
    PolicyHarness.Run(options.PolicySeconds, options.PoliciesSvg, Console.Out);
    return 0;
}
if (options.Design)
{
    // The design measurements behind docs/design.md (not part of the published comparison).
    BenchmarkRunner.Run<PriorityAsync.Benchmarks.Design.SendWaiterPoolBenchmarks>(BuildConfig(options));
    return 0;
}


if (options.LeaseTimers)
{
    // Loop timers against Task.Delay where the loop often goes idle (issue 22), and a timer's lateness on an idle loop.
    LeaseTimers.Run(options.LeaseRuns, Console.Out);
    return 0;
}

if (options.LockSteadyOne is { } one)
{
    LockSteady.RunOne(one.Place, one.Lock, one.Seconds, Console.Out); // a child of --lock-steady
    return 0;
}

if (options.LockSteadyRounds > 0)
{
    // The uncontended lock as an application uses it (issue 38): one place per process, in steady state.
    LockSteady.Run(options.LockSteadyRounds, 2, Console.Out);
    return 0;
}

if (options.LockCpuRounds > 0)
{
    // The uncontended lock in thread CPU time (issue 38): LockBenchmarks' cases, readable under load.
    LockCpu.Run(options.LockCpuRounds, Console.Out);
    return 0;
}

if (options.CheckpointsLongItem)
{
    // Checkpoints inside a long item over its quota (issue 22), against the quota-off loop and ShouldYield.
    CheckpointLongItem.Run(Console.Out);
    return 0;
}

if (options.IdleSeconds > 0)
{
    // An idle process's CPU with idle loops and a pool, against the same program without the library (issue 41, docs/benchmarks.md).
    IdleCost.Run(options.IdleSeconds, options.IdleWarmupSeconds, options.IdleRounds, options.IdleCases);
    return 0;
}

if (options.WatchdogSeconds > 0)
{
    // The stall watchdog's CPU with its default timeout, idle and busy (issue 18, docs/benchmarks.md).
    WatchdogCost.Run(options.WatchdogSeconds);
    return 0;
}

if (options.SliceClock)
{
    // The time quota's cost and lateness per slice length, behind PrioritySchedulerOptions.DefaultTimeSlice (docs/benchmarks.md).
    SliceClockCost.Run();
    return 0;
}

var results = new List<Measurement>();
var runs = new List<IReadOnlyList<Measurement>>();
var harness = new List<HarnessResult>();
IReadOnlyList<(string Goal, string Figure, bool? Met)> extraGoals = [];
DateTime runAt = DateTime.UtcNow;
bool quick = options.Quick;
if (options.ResultsFrom is { } savedPath)
{
    // Print the tables and draw the chart again from a saved run; nothing is measured.
    SavedResults saved = SavedResults.Load(savedPath);
    results.AddRange(saved.Measurements);
    harness.AddRange(saved.Harness);
    runAt = saved.RunAtUtc;
    quick = saved.Quick;
}
else
{
    if (options.RunBdn)
    {
        IConfig config = BuildConfig(options);
        // The diagnostics costs run only when asked for (--filter '*Diagnostics*'): their listeners are process-wide.
        Type[] diagnostics = options.Filter?.Contains("Diagnostics", StringComparison.Ordinal) == true ? [typeof(DiagnosticsBenchmarks)] : [];
        Type[] types =
        [
            typeof(AwaitBenchmarks),
            typeof(PostDrainBenchmarks),
            typeof(StreamingBenchmarks),
            typeof(PingPongBenchmarks),
            typeof(SchedulerBenchmarks),
            typeof(TimerBenchmarks),
            typeof(CheckpointBenchmarks),
            typeof(ControllerBenchmarks),
            typeof(HostDrainBenchmarks),
            typeof(LockBenchmarks),
            typeof(FlowBenchmarks),
            .. diagnostics,
        ];

        // A quick run measures everything several times, one short run after another; each figure is the median of the runs, and a
        // goal counts as met only when every run meets it (KeyRatios). The full run is one out-of-process run.
        for (int run = 1; run <= options.Runs; run++)
        {
            if (options.Runs > 1)
            {
                Console.WriteLine($"== Run {run} of {options.Runs} ==");
            }

            Summary[] summaries = BenchmarkRunner.Run(types, config);
            runs.Add(Measurement.FromSummaries(summaries).ToList());
        }

        results.AddRange(runs.Count == 1 ? runs[0] : Measurement.Aggregate(runs));
    }

    if (options.RunHarness)
    {
        Console.WriteLine();
        Console.WriteLine("== Custom harnesses (Stopwatch timestamps, in this process) ==");
        harness.AddRange(WakeupLatency.Run(options.LatencySamples));
        harness.AddRange(PriorityUnderLoad.Run(options.Quick));
        Console.WriteLine();
        extraGoals = CheckpointLongItem.Run(Console.Out);
    }
}

var report = new KeyRatios(results, harness, runs.Count > 1 ? runs.Select(r => new KeyRatios(r, harness)).ToList() : null, extraGoals);
report.Print(Console.Out);

string artifacts = Path.Combine(Directory.GetCurrentDirectory(), "BenchmarkDotNet.Artifacts");
Directory.CreateDirectory(artifacts);
string markdownPath = Path.Combine(artifacts, options.Quick ? "key-ratios-quick.md" : "key-ratios.md");
using (var writer = new StreamWriter(markdownPath))
{
    report.Print(writer);
}

Console.WriteLine($"Key ratios written to {markdownPath}");
if (options.ResultsFrom is null)
{
    string jsonPath = Path.Combine(artifacts, options.Quick ? "results-quick.json" : "results.json");
    new SavedResults(runAt, options.Quick, results, harness).Save(jsonPath);
    Console.WriteLine($"Results written to {jsonPath} (redraw with --results-from {jsonPath})");
}

if (options.SvgPath is { } svgPath && results.Count > 0)
{
    Chart.Write(svgPath, report, quick, runAt);
    Console.WriteLine($"Chart written to {Path.GetFullPath(svgPath)}");
}

return 0;

static IConfig BuildConfig(BenchOptions options)
{
    Job job;
    if (options.Quick)
    {
        // In-process and short: a reviewer's check of the ratios, not the published figures.
        job = Job.Default
            .WithToolchain(InProcessEmitToolchain.Instance)
            .WithLaunchCount(1)
            .WithWarmupCount(2)
            .WithIterationCount(6)
            .WithIterationTime(TimeInterval.FromMilliseconds(100))
            .WithId("Quick");
    }
    else
    {
        // Every benchmark runs in its own freshly built process on net10.0 (BenchmarkDotNet's csproj toolchain, out of process).
        // BenchmarkDotNet 0.15.8 knows .NET 10, so its own runtime moniker and toolchain are used as they are.
        job = Job.Default
            .WithRuntime(CoreRuntime.Core10_0)
            .WithToolchain(CsProjCoreToolchain.NetCoreApp10_0)
            .WithLaunchCount(1)
            .WithWarmupCount(5)
            .WithIterationCount(20)
            .WithIterationTime(TimeInterval.FromMilliseconds(200))
            .WithId("net10.0-oop");
    }

    ManualConfig config = ManualConfig.CreateEmpty()
        .AddJob(job)
        .AddDiagnoser(MemoryDiagnoser.Default)
        .AddColumnProvider(DefaultColumnProviders.Instance)
        .AddColumn(StatisticColumn.OperationsPerSecond)
        .AddLogger(BenchmarkDotNet.Loggers.ConsoleLogger.Default)
        .AddExporter(BenchmarkDotNet.Exporters.MarkdownExporter.GitHub)
        .AddExporter(BenchmarkDotNet.Exporters.Json.JsonExporter.Brief)
        .AddAnalyser(BenchmarkDotNet.Analysers.EnvironmentAnalyser.Default)
        .AddValidator(BenchmarkDotNet.Validators.JitOptimizationsValidator.FailOnError)
        .AddLogicalGroupRules(BenchmarkLogicalGroupRule.ByCategory)
        .WithOrderer(new BenchmarkDotNet.Order.DefaultOrderer(BenchmarkDotNet.Order.SummaryOrderPolicy.Declared))
        .WithOptions(ConfigOptions.JoinSummary);
    if (options.Filter is { } filter)
    {
        config = config.AddFilter(new GlobFilter(filter.Split(',', StringSplitOptions.RemoveEmptyEntries))); // several globs: a,b
    }

    return config;
}

internal sealed class BenchOptions
{
    public bool Quick { get; private set; }

    public bool Design { get; private set; }

    public bool SliceClock { get; private set; }

    public bool CheckpointsLongItem { get; private set; }

    /// <summary>--lock-cpu [rounds]: only the uncontended lock in thread CPU time (Harness/LockCpu.cs); 15 rounds by default.</summary>
    public int LockCpuRounds { get; private set; }

    /// <summary>--lock-steady [rounds]: the uncontended lock, one place and lock per child process (Harness/LockSteady.cs); 2 rounds by
    /// default.</summary>
    public int LockSteadyRounds { get; private set; }

    /// <summary>--lock-steady-one place lock seconds: one child of --lock-steady.</summary>
    public (int Place, int Lock, double Seconds)? LockSteadyOne { get; private set; }

    public bool LeaseTimers { get; private set; }

    public int LeaseRuns { get; private set; } = 7;

    public int WatchdogSeconds { get; private set; }

    /// <summary>--idle-cost [seconds]: the window of each idle case (60 unless a number follows); 0: not asked for.</summary>
    public int IdleSeconds { get; private set; }

    /// <summary>--idle-warmup: seconds each idle child runs before its window (JIT tiering of what runs periodically settles).</summary>
    public int IdleWarmupSeconds { get; private set; } = 30;

    public int IdleRounds { get; private set; } = 1;

    public IReadOnlyCollection<string>? IdleCases { get; private set; }

    public bool RunBdn { get; private set; } = true;

    public bool RunHarness { get; private set; } = true;

    public string? Filter { get; private set; }

    public string? SvgPath { get; private set; }

    public string? ResultsFrom { get; private set; }

    public int LatencySamples { get; private set; }

    public bool Policies { get; private set; }

    /// <summary>--threads [rounds]: issue 20's harness (Threads/ThreadsHarness.cs), 3 rounds unless a number follows; 0: not asked for.</summary>
    public int ThreadsRounds { get; private set; }

    /// <summary>--threads-cases cpu,flood,streaming: which of the --threads harness's cases run (null: all).</summary>
    public IReadOnlyCollection<string>? ThreadsCases { get; private set; }

    /// <summary>--inversion [runs]: issue 38's harness (Harness/Inversion.cs), 1 run unless a number follows; 0: not asked for.</summary>
    public int InversionRuns { get; private set; }

    /// <summary>--inversion-seconds n: the length of one run of one case (the issue's: 3 s).</summary>
    public double InversionSeconds { get; private set; } = 3;

    /// <summary>--inversion-cases a,b: which of the --inversion harness's cases run (null: all).</summary>
    public IReadOnlyCollection<string>? InversionCases { get; private set; }

    /// <summary>Short runs of the BenchmarkDotNet suite (--quick: 3 by default, --runs n; a full run: 1).</summary>
    public int Runs { get; private set; } = 1;

    public bool Reexec { get; private set; } = true;

    public int PolicySeconds { get; private set; } = 10;

    public string? PoliciesSvg { get; private set; }

    public static BenchOptions Parse(string[] args)
    {
        var options = new BenchOptions();
        string? svg = null;
        int? samples = null;
        int? runs = null;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--quick":
                    options.Quick = true;
                    break;
                case "--runs" when i + 1 < args.Length:
                    runs = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                case "--no-reexec":
                    options.Reexec = false;
                    break;
                case "--design":
                    options.Design = true;
                    break;
                case "--slice-clock":
                    options.SliceClock = true;
                    break;
                case "--lock-steady":
                    options.LockSteadyRounds = i + 1 < args.Length && int.TryParse(args[i + 1], out int steadyRounds) ? steadyRounds : 2;
                    i += i + 1 < args.Length && int.TryParse(args[i + 1], out _) ? 1 : 0;
                    break;
                case "--lock-steady-one" when i + 3 < args.Length:
                    options.LockSteadyOne = (
                        int.Parse(args[i + 1], CultureInfo.InvariantCulture),
                        int.Parse(args[i + 2], CultureInfo.InvariantCulture),
                        double.Parse(args[i + 3], CultureInfo.InvariantCulture));
                    i += 3;
                    break;
                case "--lock-cpu":
                    options.LockCpuRounds = i + 1 < args.Length && int.TryParse(args[i + 1], out int lockRounds) ? lockRounds : 15;
                    i += i + 1 < args.Length && int.TryParse(args[i + 1], out _) ? 1 : 0;
                    break;
                case "--checkpoint-long-item":
                    options.CheckpointsLongItem = true;
                    break;
                case "--lease-timers":
                    options.LeaseTimers = true;
                    break;
                case "--lease-runs" when i + 1 < args.Length:
                    options.LeaseRuns = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                case "--watchdog-cost":
                    options.WatchdogSeconds = NumberAfter(args, ref i, 30); // seconds per case, unless a number follows
                    break;
                case "--idle-cost":
                    options.IdleSeconds = NumberAfter(args, ref i, 60); // the window of each case
                    break;
                case "--idle-warmup" when i + 1 < args.Length:
                    options.IdleWarmupSeconds = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                case "--idle-rounds" when i + 1 < args.Length:
                    options.IdleRounds = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                case "--idle-cases" when i + 1 < args.Length:
                    options.IdleCases = CasesAfter(args, ref i, IdleCost.CaseNames);
                    options.IdleSeconds = options.IdleSeconds == 0 ? 60 : options.IdleSeconds;
                    break;
                case "--no-bdn":
                    options.RunBdn = false;
                    break;
                case "--no-harness":
                    options.RunHarness = false;
                    break;
                case "--filter" when i + 1 < args.Length:
                    options.Filter = args[++i];
                    break;
                case "--svg" when i + 1 < args.Length:
                    svg = args[++i];
                    break;
                case "--results-from" when i + 1 < args.Length:
                    options.ResultsFrom = args[++i];
                    break;
                case "--threads":
                    options.ThreadsRounds = NumberAfter(args, ref i, 3);
                    break;
                case "--threads-cases" when i + 1 < args.Length:
                    options.ThreadsCases = CasesAfter(args, ref i, PriorityAsync.Benchmarks.Threads.ThreadsHarness.CaseNames);
                    options.ThreadsRounds = options.ThreadsRounds == 0 ? 3 : options.ThreadsRounds;
                    break;
                case "--inversion":
                    options.InversionRuns = NumberAfter(args, ref i, 1);
                    break;
                case "--inversion-seconds" when i + 1 < args.Length:
                    options.InversionSeconds = double.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    options.InversionRuns = Math.Max(options.InversionRuns, 1);
                    break;
                case "--inversion-cases" when i + 1 < args.Length:
                    options.InversionCases = CasesAfter(args, ref i, Inversion.CaseNames);
                    options.InversionRuns = Math.Max(options.InversionRuns, 1);
                    break;
                case "--policies":
                    options.Policies = true;
                    break;
                case "--policy-seconds" when i + 1 < args.Length:
                    options.PolicySeconds = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                case "--policies-svg" when i + 1 < args.Length:
                    options.PoliciesSvg = args[++i];
                    break;
                case "--samples" when i + 1 < args.Length:
                    samples = int.Parse(args[++i], System.Globalization.CultureInfo.InvariantCulture);
                    break;
                default:
                    throw new ArgumentException($"Unknown argument '{args[i]}'. Use --quick [--runs <n>] [--no-reexec], --design, --lock-cpu [rounds], --lock-steady [rounds], --slice-clock, --checkpoint-long-item, --lease-timers [--lease-runs <n>], --watchdog-cost [seconds], --idle-cost [seconds] [--idle-warmup <s>] [--idle-rounds <n>] [--idle-cases a,b], --threads [rounds] [--threads-cases cpu,flood,streaming], --inversion [runs] [--inversion-seconds <n>] [--inversion-cases <a,b>], --filter <glob>, --no-bdn, --no-harness, --svg <path>, --samples <n>, --results-from <results.json>, --policies [--policy-seconds <n>] [--policies-svg <path>].");
            }
        }

        options.LatencySamples = samples ?? (options.Quick ? 400 : 3000);
        options.Runs = runs ?? (options.Quick ? 3 : 1);
        if (options.Runs < 1 || (options.Runs > 1 && !options.Quick))
        {
            throw new ArgumentException($"--runs must be at least 1, and more than 1 only with --quick (got {options.Runs}); a full run is one out-of-process run.");
        }

        // The chart goes to docs/ when a full run starts from the repository root; a quick or partial run writes it beside the
        // artifacts, so a reviewer's check does not overwrite the published chart.
        // A partial run (--filter, --no-bdn, --no-harness) must not overwrite the published chart either.
        bool partial = options.Filter is not null || !options.RunBdn || !options.RunHarness;
        options.SvgPath = svg ?? (options.Quick || partial
            ? Path.Combine("BenchmarkDotNet.Artifacts", options.Quick ? "benchmarks-quick.svg" : "benchmarks-partial.svg")
            : (Directory.Exists("docs") ? Path.Combine("docs", "benchmarks.svg") : Path.Combine("BenchmarkDotNet.Artifacts", "benchmarks.svg")));
        return options;
    }

    /// <summary>The number after the option at <paramref name="i"/> when one follows (and steps over it), else <paramref name="otherwise"/>.</summary>
    private static int NumberAfter(string[] args, ref int i, int otherwise)
    {
        if (i + 1 < args.Length && int.TryParse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture, out int number))
        {
            i++;
            return number;
        }

        return otherwise;
    }

    /// <summary>The comma-separated case names after the option at <paramref name="i"/>, each one of <paramref name="known"/>.</summary>
    private static string[] CasesAfter(string[] args, ref int i, string[] known)
    {
        string option = args[i];
        string[] cases = args[++i].Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (cases.Length == 0 || cases.Except(known).Any())
        {
            throw new ArgumentException($"Unknown {option} value '{args[i]}'. Use a comma-separated list of {string.Join(", ", known)}.");
        }

        return cases;
    }
}
