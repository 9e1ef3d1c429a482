// The lease worker of the seed article (Async Wandering, part 15), reproduced, and beaten with PriorityAsync.
//
// A worker takes messages from a bus that leases them. For each message it keeps the lease alive in the background (refreshing it
// every 2 s, a 250 ms call) and processes the message in 20 steps of CPU work then I/O. The bus, not the worker, decides whether a
// refresh came in time. The same worker runs four ways, side by side:
//
//   threadpool       plain async on the thread pool: it survives by running continuations on many threads;
//   single           one thread, FIFO continuations (Nito.AsyncEx's AsyncContext): processing starves the lease refreshes;
//   seed-prioritize  the seed's fix on that thread: a Guid-cookie Prioritize protocol that spins through Task.Yield;
//   priority         PriorityAsync: lease 2 > processing 1 > receiving 0, carried across awaits, no polling.
//
// and, when --modes names it, a fifth: priority-threads, the same levels on a PriorityThreadPool with one thread per core.
//
// Everything below is in the seed's time; --time-scale shrinks every duration by one factor so the run takes seconds.
// The worker is Worker.cs, the bus LeaseBus.cs, and what each mode does at the worker's scheduling points is in LeaseWorker.Core/Modes.

using System;
using System.Collections.Generic;
using System.Globalization;
using LeaseWorker;
using Samples.Support;

// 1. The settings: the seed's numbers, changed by the command line. Bad arguments: one line on stderr, exit code 2.
if (SampleCommandLine.Exit("LeaseWorker", CommandLine.TryParse(args, out Options options, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

Settings settings = options.Settings;
bool table = !options.Json;

if (table)
{
    Report.WriteIntro(Console.Out, settings);
}

// 2. Warm up: a tiny run of each mode, so JIT compilation is not charged to the measured runs.
Simulation.WarmUp(settings, options.Modes);

// --starve-pool N: a careless library blocks N thread-pool threads forever (never released). After the warm-up, so that the
// measured runs meet the starved pool rather than the warm-up (the pool recovers only by injecting threads, which the warm-up
// would give it time to do).
if (settings.StarvePool > 0)
{
    PoolStarvation.Flood(settings.StarvePool);
}

// 3. Run each mode against a fresh bus: makespan, CPU time and threads measured here, received / succeeded / lost counted by the bus.
var results = new List<ModeResult>();
var observation = new Observation(options.TracePath, options.TimelinePath); // --trace, --timeline (Observation.cs)
foreach (string mode in options.Modes)
{
    if (table)
    {
        Console.Write($"  running {mode,-16}");
    }

    ModeResult result = Simulation.Run(mode, settings, observation.Before(mode));
    observation.After(mode);
    results.Add(result);
    if (table)
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{result.Makespan.TotalSeconds,6:0.0} s, lost {result.Bus.Lost} of {result.Bus.Received}"));
    }
}

observation.Finish(settings);

// 4. The report. Exit code 0 whatever was lost: losing messages is a result, not an error; 2 if --trace or --timeline could not be written.
Report.Write(Console.Out, settings, results, options.Json, options.Wide);
return observation.Failed ? 2 : 0;
