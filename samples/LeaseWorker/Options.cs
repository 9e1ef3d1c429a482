using System.Collections.Generic;

namespace LeaseWorker;

/// <summary>What the command line asked for.</summary>
/// <param name="Json">--json: every measurement as JSON, for a script, instead of the table.</param>
/// <param name="Wide">--wide: the full table (every column, the bystander notes) instead of the one that fits 120 columns.</param>
/// <param name="TracePath">--trace: where to write the priority run's dispatch trace (Chrome trace JSON), or null.</param>
/// <param name="TimelinePath">--timeline: where to write the per-message timeline (SVG), or null.</param>
public sealed record Options(
    Settings Settings, IReadOnlyList<string> Modes, bool Json = false, bool Wide = false, string? TracePath = null, string? TimelinePath = null);
