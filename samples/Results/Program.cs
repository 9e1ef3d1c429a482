// Process results as the calls complete, urgent ones first: the seed article "Is Your Thread Working as Hard as you Think it is?"
// reproduced with N calls, and beaten with PriorityAsync.
//
// N calls are made at once; their responses arrive over a window, in batches (every call of a batch is ready at the same moment).
// Each result needs a little CPU work, and one call in five is urgent (a user waits for it; the others are prefetches). Variants:
//
//   one by one     await each call in the order they were made (the seed's first approach);
//   WhenAll        await them all, then process (the seed's second);
//   WhenAny loop   "process tasks as they complete": WhenAny over the pending calls, remove the winner: O(n^2);
//   packed (pool)  the seed's best: each call packed with its processing, WhenAll over the packs, on the thread pool;
//   PriorityAsync  the same packing on one thread with levels: each continuation comes back at its own level, so of the results
//                  ready at the same time the urgent ones are processed first. No lock, no WhenAny, no list.
//
// The variants are Variants.cs; the calls and their arrivals Workload.cs and SimulatedNetwork.cs; the measurements Runner.cs.

using System;
using System.Collections.Generic;
using System.Linq;
using Results;
using Samples.Support;

if (SampleCommandLine.Exit("Results", CommandLine.TryParse(args, out Settings settings, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

Report.WriteHeader(Console.Out, settings);
Runner.WarmUp(settings);
IReadOnlyList<RunResult> results = Runner.RunAll(settings, r => Console.Error.Write('.'));
Console.Error.WriteLine();
Report.WriteTable(Console.Out, results);

// A variant that lost or repeated a result, or PriorityAsync processing an urgent result after a non-urgent one that was ready no
// earlier, is a bug, not a result.
bool wrong = results.Any(r => r.Measured && r.NotProcessedExactlyOnce != 0)
    || results.Any(r => r.Variant == Variant.Priority && r.OvertakenUrgent != 0);
return wrong ? 1 : 0;
