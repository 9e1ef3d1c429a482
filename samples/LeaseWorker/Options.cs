using System.Collections.Generic;

namespace LeaseWorker;

/// <summary>What the command line asked for.</summary>
/// <param name="TracePath">--trace: where to write the priority run's dispatch trace (Chrome trace JSON), or null.</param>
/// <param name="TimelinePath">--timeline: where to write the per-message timeline (SVG), or null.</param>
/// <param name="Show">--help or --version: the text to print (the generated help, or the version), then exit 0; null: run.</param>
/// <param name="Wide">--wide: the full table (every column, the bystander notes) instead of the one that fits 120 columns.</param>
public sealed record Options(
    Settings Settings, IReadOnlyList<string> Modes, OutputFormat Format, string? Show, string? TracePath = null, string? TimelinePath = null, bool Wide = false);
