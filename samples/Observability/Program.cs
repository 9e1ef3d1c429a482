// Observability: what the PriorityAsync meter and trace recorder show for a small workload (docs/observability.md).
//
// A loop with three levels runs a steady low-level load (level 0: 2 ms items), a burst of urgent items (level 2) every 100 ms and a
// medium stream (level 1). A MeterListener prints every instrument once a second, as `dotnet-counters monitor --counters PriorityAsync`
// would; with --trace FILE.json the run is also recorded for Perfetto / chrome://tracing.
//
//   dotnet run --project samples/Observability -c Release [-- --duration 3s] [--trace FILE.json]

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Observability;
using PriorityAsync;
using Samples.Support;

if (SampleCommandLine.Exit("Observability", CommandLine.TryParse(args, out TimeSpan duration, out string? tracePath, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

// 1. Listen to the meter, the way an exporter does: enable every instrument of "PriorityAsync", aggregate, print once a second.
var sums = new Dictionary<(string Instrument, string Tags), (double Sum, long Count, double Max)>();
var shared = new SortedSet<string>(StringComparer.Ordinal);
using var listener = new MeterListener
{
    InstrumentPublished = (instrument, l) =>
    {
        if (instrument.Meter.Name == "PriorityAsync")
        {
            l.EnableMeasurementEvents(instrument);
        }
    },
};
listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Aggregate(instrument, value, tags));
listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Aggregate(instrument, value, tags));
listener.Start();

// 2. Optionally record the dispatch trace.
using PriorityTraceRecorder? recorder = tracePath is null ? null : PriorityTraceRecorder.Start();

// 3. The workload, on its own loop thread.
await using var loop = new PriorityContextThread(new PriorityContextOptions { Name = "demo", Levels = 3 });
var stop = new CancellationTokenSource(duration);
Task workload = loop.Context.GetTaskFactory(0).StartNew(() => RunWorkload(loop.Context, stop.Token)).Unwrap();

var clock = Stopwatch.StartNew();
while (!workload.IsCompleted)
{
    await Task.WhenAny(workload, Task.Delay(1000));
    Print(clock.Elapsed);
}

await workload;
if (recorder is not null)
{
    recorder.Stop();
    try
    {
        recorder.WriteChromeTrace(tracePath!);
    }
    catch (Exception e) when (e is IOException or UnauthorizedAccessException)
    {
        Console.Error.WriteLine($"Observability: could not write {tracePath}: {e.Message}");
        return 2;
    }

    Console.WriteLine($"wrote {tracePath}: {recorder.RecordedCount} items, {recorder.OverflowCount} not recorded for lack of room");
}

return 0;

void Aggregate(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
{
    // The tags every instrument of this one loop shares (its name and kind) go in the header; each line shows the rest, in full.
    string key = string.Join(",", tags.ToArray().Where(t => !IsShared(t.Key)).Select(t => $"{t.Key}={t.Value}"));
    lock (sums)
    {
        foreach (KeyValuePair<string, object?> tag in tags)
        {
            if (IsShared(tag.Key))
            {
                shared.Add($"{tag.Key}={tag.Value}");
            }
        }

        bool observable = instrument.GetType().Name.StartsWith("Observable", StringComparison.Ordinal);
        sums.TryGetValue((instrument.Name, key), out var current);
        sums[(instrument.Name, key)] = observable
            ? (value, 1, value) // an observation is the current value
            : (current.Sum + value, current.Count + 1, Math.Max(current.Max, value));
    }
}

void Print(TimeSpan at)
{
    listener.RecordObservableInstruments();
    lock (sums)
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"[PriorityAsync] at {at.TotalSeconds:0.0} s: {string.Join(", ", shared)}"));
        foreach (var ((instrument, tags), (sum, count, max)) in sums.OrderBy(p => p.Key.Instrument, StringComparer.Ordinal).ThenBy(p => p.Key.Tags, StringComparer.Ordinal))
        {
            string shown = instrument.EndsWith(".duration", StringComparison.Ordinal)
                ? string.Create(CultureInfo.InvariantCulture, $"count {count,7}  mean {sum / count * 1e3,8:0.000} ms  max {max * 1e3,8:0.000} ms")
                : string.Create(CultureInfo.InvariantCulture, $"{sum,10:0}");
            Console.WriteLine($"    {instrument,-39} [{tags}]{new string(' ', Math.Max(1, 25 - tags.Length))}{shown}");
        }
    }
}

static bool IsShared(string tag) => tag is "priorityasync.context" or "priorityasync.scheduler.kind";

static async Task RunWorkload(PriorityContext context, CancellationToken stop)
{
    // Level 1: a medium stream; level 2: an urgent burst every 100 ms; level 0 (this method): 2 ms items back to back.
    Task producer = Task.Run(async () =>
    {
        while (!stop.IsCancellationRequested)
        {
            await Task.Delay(100).ConfigureAwait(false);
            for (int i = 0; i < 5; i++)
            {
                context.GetSynchronizationContext(2).Post(static _ => Thread.SpinWait(200), null);
            }

#pragma warning disable PA0002 // the load the sample observes: a level-1 item that occupies the loop for 1 ms
            context.GetSynchronizationContext(1).Post(static _ => Thread.Sleep(1), null);
#pragma warning restore PA0002
        }
    }, CancellationToken.None);

    while (!stop.IsCancellationRequested)
    {
#pragma warning disable PA0002 // stands for a 2 ms low-level item of CPU work, which blocks the loop just as much
        Thread.Sleep(2);          // a 2 ms low-level item
#pragma warning restore PA0002
        await context.Yield(0);   // let more urgent work in
    }

    await producer;               // it ends with the same token: awaiting it surfaces its failure instead of losing it
}
