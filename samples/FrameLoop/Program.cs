// A game's main thread, 60 frames a second, with three kinds of continuation on it: input handlers (events arrive from outside),
// animations (each awaits the next frame), and waves of background loading (disk reads complete off the main thread, then a parse per
// asset and a long decompression with yield points run on it). The same frames and the same events, drained two ways:
//
//   1. First in first out, everything queued, as Godot's GodotSynchronizationContext.ExecutePendingContinuations() does once per
//      frame: a burst of loading continuations stands in front of input and animation, and the frame runs until the burst is done.
//   2. PriorityAsync: a PriorityContext attached to the main thread, drained once per frame within a budget, input first and always,
//      then animation, then loading while the budget lasts; the decompression's checkpoints yield once it is spent.
//
// The table: frames over 16.7 ms, input latency from arrival to handled (p50, p99), background continuations per second, and how long a
// wave took to load. --clock virtual runs the same on virtual time: exact figures, whatever the machine's load.

using System;
using FrameLoop;
using Samples.Support;

if (SampleCommandLine.Exit("FrameLoop", CommandLine.TryParse(args, out Settings settings, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

Console.WriteLine(Report.Header(settings, Machine.LoadAverage()));
Console.WriteLine();
Console.WriteLine(Report.ColumnHeader);
DrainResult? fifo = null;
DrainResult? priority = null;
if (settings.Fifo)
{
    fifo = Frames.Run(settings, priority: false);
    Console.WriteLine(Report.Row(fifo));
}

if (settings.Priority)
{
    priority = Frames.Run(settings, priority: true);
    Console.WriteLine(Report.Row(priority));
}

Console.WriteLine();
(bool kept, string verdict) = Report.Verdict(settings, fifo, priority);
Console.WriteLine(verdict);

// On virtual time a claim that fails is the library's failure; on the machine's clock it may be the machine's load: the verdict says so.
return kept || !settings.Virtual ? 0 : 1;
