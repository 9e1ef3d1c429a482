using System;

namespace Results;

/// <summary>
/// The calls of one run, fixed before it starts: which batch each call's response arrives in, and which calls are urgent.
/// Deterministic (a hash of the call's index), so every variant sees exactly the same calls and the same arrivals.
/// </summary>
/// <remarks>
/// Responses arrive in <see cref="BatchCount"/> batches, one every <c>window / BatchCount</c>: every call of a batch becomes ready
/// at the same moment. That is what an event loop's I/O poll sees (one poll wakes every call that finished since the last one),
/// and it makes "urgent results first among those ready at the same time" a checkable claim instead of a race.
/// </remarks>
internal sealed class Workload
{
    /// <summary>The most batches a run has; fewer when there are fewer calls.</summary>
    public const int MaxBatches = 50;

    public Workload(int calls, int urgentEvery)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(calls, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(urgentEvery, 1);

        Count = calls;
        BatchCount = Math.Min(calls, MaxBatches);
        BatchOf = new int[calls];
        IsUrgent = new bool[calls];
        int[] sizes = new int[BatchCount];
        for (int i = 0; i < calls; i++)
        {
            uint hash = Mix((uint)i);
            BatchOf[i] = (int)(hash % (uint)BatchCount);
            IsUrgent[i] = (Mix(hash) % (uint)urgentEvery) == 0;
            sizes[BatchOf[i]]++;
            UrgentCount += IsUrgent[i] ? 1 : 0;
        }

        // Each batch lists its calls in index order: the order the network completes them in (urgent calls are scattered in it).
        Batches = new int[BatchCount][];
        int[] filled = new int[BatchCount];
        for (int b = 0; b < BatchCount; b++)
        {
            Batches[b] = new int[sizes[b]];
        }

        for (int i = 0; i < calls; i++)
        {
            int b = BatchOf[i];
            Batches[b][filled[b]++] = i;
        }
    }

    /// <summary>Gets the number of calls.</summary>
    public int Count { get; }

    /// <summary>Gets the number of urgent calls (a user waits for these; the others are prefetches).</summary>
    public int UrgentCount { get; }

    /// <summary>Gets the number of batches the responses arrive in.</summary>
    public int BatchCount { get; }

    /// <summary>Gets, per call, the batch its response arrives in (0 first).</summary>
    public int[] BatchOf { get; }

    /// <summary>Gets, per call, whether it is urgent.</summary>
    public bool[] IsUrgent { get; }

    /// <summary>Gets, per batch, its calls in the order the network completes them.</summary>
    public int[][] Batches { get; }

    // A fixed integer hash (lowbias32): the same calls on every machine and every .NET version, unlike a seeded Random.
    private static uint Mix(uint x)
    {
        x ^= x >> 16;
        x *= 0x7feb352d;
        x ^= x >> 15;
        x *= 0x846ca68b;
        x ^= x >> 16;
        return x;
    }
}
