namespace Docs.Tests;

/// <summary>The tests that start processes of their own (packs, builds, the documented commands) run one at a time, after the
/// others: two at once would only compete for the cores, and beside a sample run in process they would make its timing claims
/// fail.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class PackCollection
{
    public const string Name = "pack";
}
