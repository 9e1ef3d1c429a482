using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;

namespace PriorityAsync.AbHarness;

/// <summary>
/// One-way wake-up latency: the sender sleeps 1 ms (so the receiver spins out and parks), stamps, sends, and spins until the receiver
/// acknowledges; the receiver stamps as soon as it runs. The first <see cref="Warmup"/> samples are not kept.
/// </summary>
internal sealed class WakeProbe(int samples)
{
    public const int Warmup = 50;

    private readonly long[] _latencies = new long[samples];
    private long _sentAt;
    private int _acknowledged;
    private int _index = -Warmup;

    /// <summary>Bytes allocated by the whole process during the kept samples (the warm-up's JIT work is not counted).</summary>
    public long AllocatedBytes { get; private set; }

    /// <summary>The number of samples taken, warm-up included.</summary>
    public static int Total(int samples) => samples + Warmup;

    /// <summary>Takes the next sample: sleeps 1 ms, stamps, sends, waits for the acknowledgement.</summary>
    public void MeasureOne(Action send)
    {
        Thread.Sleep(1);
        long allocated = _index >= 0 ? GC.GetTotalAllocatedBytes(precise: true) : 0;
        {
            Volatile.Write(ref _acknowledged, 0);
            Volatile.Write(ref _sentAt, Stopwatch.GetTimestamp());
            send();
            var spinner = default(SpinWait);
            long deadline = Stopwatch.GetTimestamp() + (10 * Stopwatch.Frequency);
            while (Volatile.Read(ref _acknowledged) == 0)
            {
                spinner.SpinOnce(sleep1Threshold: -1);
                if (Stopwatch.GetTimestamp() > deadline)
                {
                    throw new TimeoutException("wake: the receiver did not run within 10 s.");
                }
            }
        }

        if (allocated != 0)
        {
            AllocatedBytes += GC.GetTotalAllocatedBytes(precise: true) - allocated;
        }
    }

    public void Arrived()
    {
        long now = Stopwatch.GetTimestamp();
        if (_index >= 0)
        {
            _latencies[_index] = now - Volatile.Read(ref _sentAt);
        }

        _index++;
        Volatile.Write(ref _acknowledged, 1);
    }

    public double PercentileUs(double fraction)
    {
        double[] sorted = _latencies.Select(t => t * 1e6 / Stopwatch.Frequency).Order().ToArray();
        return Stats.Percentile(sorted, fraction);
    }
}
