using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;

namespace Results;

/// <summary>
/// Processes results (a fixed slice of CPU work each, as the seed's <c>Thread.Sleep</c> after each call, but burning CPU) and records
/// the order they were processed in and when each finished. Thread-safe: the packed variant processes on several threads at once.
/// </summary>
internal sealed class Recorder
{
    private readonly Workload _workload;
    private readonly long _workTicks;
    private readonly int[] _order;
    private readonly long[] _finishedAt;
    private int _processed;

    public Recorder(Workload workload, TimeSpan workPerResult)
    {
        _workload = workload;
        _workTicks = (long)(workPerResult.TotalSeconds * Stopwatch.Frequency);
        _order = new int[workload.Count];
        _finishedAt = new long[workload.Count];
    }

    /// <summary>Gets the number of results processed so far.</summary>
    public int Processed => Volatile.Read(ref _processed);

    /// <summary>Gets the calls in the order their results were processed (complete once every result was processed).</summary>
    public ReadOnlySpan<int> Order => _order.AsSpan(0, Processed);

    /// <summary>Processes one result: the CPU work, then the record.</summary>
    public void Process(int result)
    {
        long until = Stopwatch.GetTimestamp() + _workTicks;
        while (Stopwatch.GetTimestamp() < until)
        {
            // The result's processing: synchronous CPU work.
        }

        int slot = Interlocked.Increment(ref _processed) - 1;
        _order[slot] = result;
        _finishedAt[slot] = Stopwatch.GetTimestamp();
    }

    /// <summary>When the last result finished processing (a <see cref="Stopwatch"/> timestamp).</summary>
    public long LastFinished()
    {
        long last = 0;
        for (int i = 0; i < Processed; i++)
        {
            last = Math.Max(last, _finishedAt[i]);
        }

        return last;
    }

    /// <summary>When the last urgent result finished processing (a <see cref="Stopwatch"/> timestamp), 0 if none did.</summary>
    public long LastUrgentFinished()
    {
        long last = 0;
        for (int i = 0; i < Processed; i++)
        {
            if (_workload.IsUrgent[_order[i]])
            {
                last = Math.Max(last, _finishedAt[i]);
            }
        }

        return last;
    }

    /// <summary>
    /// Counts the urgent results that were overtaken: processed after some non-urgent result that became ready no earlier (in the
    /// same batch or a later one). Zero means every urgent result was processed before any non-urgent result ready at the same time.
    /// </summary>
    public int CountOvertakenUrgent()
    {
        int overtaken = 0;
        int latestNonUrgentBatch = -1; // the latest batch of any non-urgent result processed so far
        foreach (int call in Order)
        {
            int batch = _workload.BatchOf[call];
            if (!_workload.IsUrgent[call])
            {
                latestNonUrgentBatch = Math.Max(latestNonUrgentBatch, batch);
            }
            else if (latestNonUrgentBatch >= batch)
            {
                overtaken++;
            }
        }

        return overtaken;
    }

    /// <summary>Counts the calls whose result was processed more or less than once (0 when the run was correct).</summary>
    public int CountNotProcessedExactlyOnce()
    {
        int[] seen = new int[_workload.Count];
        foreach (int call in Order)
        {
            seen[call]++;
        }

        return seen.Count(static n => n != 1);
    }
}
