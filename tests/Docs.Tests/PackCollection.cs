namespace Docs.Tests;

/// <summary>The packing tests run one at a time: each starts builds of its own, and two at once would only compete for the cores.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class PackCollection
{
    public const string Name = "pack";
}
