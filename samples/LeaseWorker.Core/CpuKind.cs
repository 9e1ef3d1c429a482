namespace LeaseWorker.Core;

/// <summary>How a CPU part of a processing step burns its time.</summary>
public enum CpuKind
{
    /// <summary>Blocks the thread without using a core (the seed's <c>Thread.Sleep</c>).</summary>
    Sleep,

    /// <summary>Burns real CPU time on the thread: the honest case, where extra threads cannot help once the cores are busy.</summary>
    Spin,
}
