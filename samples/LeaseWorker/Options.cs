using System.Collections.Generic;

namespace LeaseWorker;

/// <summary>What the command line asked for.</summary>
public sealed record Options(Settings Settings, IReadOnlyList<string> Modes, OutputFormat Format, bool ShowHelp);
