using System;
using System.Collections.Generic;
using System.CommandLine;
using System.Diagnostics.CodeAnalysis;
using System.Linq;
using Samples.Support;

namespace FrameLoop;

/// <summary>The command line, on System.CommandLine (samples/SampleSupport): never throws for bad input, returns a one-line error.</summary>
internal static class CommandLine
{
    private static readonly string[] s_allDrains = ["fifo", "priority"];
    private static readonly Settings s_defaults = new();
    private static readonly SampleCommandLine s_line = new(
        "A 60 fps frame loop whose main thread runs three kinds of continuation (input, animation, background loading), drained once " +
        "per frame first in first out (Godot's model) and by PriorityAsync with a budget, side by side: frames over budget, input " +
        "latency, background throughput. Exit code: 0 once the run is done (on the machine's clock, a loaded machine can push frames " +
        "over: the verdict line says so); with --clock virtual, exact at any load, 1 when PriorityAsync did not keep every frame, " +
        "keep input within a frame and keep the background moving; 2 for bad arguments.");

    private static readonly Option<string> s_clock = s_line.Add(SampleCommandLine.Choice("--clock", "real", "real: the machine's time; virtual: work advances a virtual clock, so the figures are exact at any load", "real", "virtual"));
    private static readonly Option<IReadOnlyList<string>> s_drains = s_line.Add(SampleCommandLine.List("--drains", s_allDrains, s_allDrains, "drain", "comma-separated: the drains to run"));
    private static readonly Option<TimeSpan?> s_duration = s_line.Add(SampleCommandLine.Duration("--duration", s_defaults.Duration, "how long each drain runs"));
    private static readonly Option<TimeSpan?> s_budget = s_line.Add(SampleCommandLine.Duration("--budget", s_defaults.Budget, "PriorityAsync's drain budget per frame"));
    private static readonly Option<int> s_animations = s_line.Add(SampleCommandLine.WholeNumber("--animations", s_defaults.Animations, "animations, one step a frame each"));
    private static readonly Option<int> s_assets = s_line.Add(SampleCommandLine.WholeNumber("--assets", s_defaults.Assets, "assets per wave of background loading"));
    private static readonly Option<int> s_inputs = s_line.Add(SampleCommandLine.WholeNumber("--inputs", s_defaults.InputsPerSecond, "input events per second"));
    private static readonly Option<int> s_seed = s_line.Add(SampleCommandLine.WholeNumber("--seed", s_defaults.Seed, "seed of the input, read and parse times"));

    /// <summary>
    /// False with one line in <paramref name="error"/> for bad input; true otherwise, with <paramref name="show"/> set for --help or
    /// --version (the text to print; the settings are then the defaults).
    /// </summary>
    public static bool TryParse(IReadOnlyList<string> args, out Settings settings, out string? show, [NotNullWhen(false)] out string? error) =>
        s_line.TryParse(args, s_defaults, Read, s => s.InputsPerSecond < 1 ? "--inputs must be at least 1." : s.Validate(), out settings, out show, out error);

    private static Settings Read(ParseResult result)
    {
        IReadOnlyList<string> drains = SampleCommandLine.GetList(result, s_drains);
        return s_defaults with
        {
            Virtual = result.GetValue(s_clock) == "virtual",
            Fifo = drains.Contains("fifo"),
            Priority = drains.Contains("priority"),
            Duration = SampleCommandLine.GetDuration(result, s_duration)!.Value,
            Budget = SampleCommandLine.GetDuration(result, s_budget)!.Value,
            Animations = result.GetValue(s_animations),
            Assets = result.GetValue(s_assets),
            InputsPerSecond = result.GetValue(s_inputs),
            Seed = result.GetValue(s_seed),
        };
    }
}
