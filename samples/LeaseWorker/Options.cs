using System.Collections.Generic;

namespace LeaseWorker;

/// <summary>What the command line asked for.</summary>
/// <param name="TracePath">--trace: where to write the priority run's dispatch trace (Chrome trace JSON), or null.</param>
/// <param name="TimelinePath">--timeline: where to write the per-message timeline (SVG), or null.</param>
public sealed record Options(Settings Settings, IReadOnlyList<string> Modes, OutputFormat Format, bool ShowHelp, string? TracePath = null, string? TimelinePath = null);
