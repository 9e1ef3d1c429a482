namespace PriorityAsync.Tests.Diagnostics;

/// <summary>
/// Listeners, the EventSource and the trace recorder are process-wide: tests that turn them on run alone, so that they neither see
/// other tests' contexts slowed down nor change what another test's context does.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class DiagnosticsCollection
{
    public const string Name = "Diagnostics";
}
