using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Records, on the one thread that runs items, every time that thread lost its core for more than a threshold: a jump between two
/// consecutive timestamps inside an item (<see cref="SpinFor"/>), or between one item's end and the next one's start while work was
/// queued. A wait that overlapped such a gap was lengthened by the OS, not by a scheduling decision, and is told apart by
/// <see cref="Classify"/>. One recorder per thread (single-threaded: the loop's; several threads: one per worker thread).
/// </summary>
public sealed class GapRecorder(double thresholdUs, int capacity = 100_000)
{
    private readonly List<(long From, long To)> _gaps = new(capacity);
    private readonly long _threshold = (long)(thresholdUs * Stopwatch.Frequency / 1_000_000.0);
    private long _lastEnd;

    /// <summary>The gaps recorded so far (stamps of <see cref="Stopwatch"/>).</summary>
    public IReadOnlyList<(long From, long To)> Gaps => _gaps;

    /// <summary>The sum of the gaps, in <see cref="Stopwatch"/> ticks.</summary>
    public long TotalTicks
    {
        get
        {
            long total = 0;
            foreach ((long from, long to) in _gaps)
            {
                total += to - from;
            }

            return total;
        }
    }

    public void Reset()
    {
        _gaps.Clear();
        _lastEnd = 0;
    }

    /// <summary>At the start of an item, with its first timestamp: a gap since the previous item's end is a descheduling.</summary>
    public void ItemStarted(long now)
    {
        if (_lastEnd != 0 && now - _lastEnd > _threshold)
        {
            Add(_lastEnd, now);
        }
    }

    public void ItemEnded() => _lastEnd = Stopwatch.GetTimestamp();

    /// <summary>Busy-runs for <paramref name="ticks"/>, recording every jump between two consecutive timestamps over the threshold.</summary>
    public void SpinFor(long ticks)
    {
        long previous = Stopwatch.GetTimestamp();
        long end = previous + ticks;
        while (true)
        {
            long now = Stopwatch.GetTimestamp();
            if (now - previous > _threshold)
            {
                Add(previous, now);
            }

            if (now >= end)
            {
                return;
            }

            previous = now;
            Thread.SpinWait(1);
        }
    }

    /// <summary>
    /// Sorts waits (<paramref name="starts"/>[i] to <paramref name="starts"/>[i] + <paramref name="waits"/>[i]) into undisturbed ones
    /// (returned) and disturbed ones; counts the waits over <paramref name="durationTicks"/> and how many of those were disturbed. A
    /// wait is disturbed when it overlapped a gap of every one of <paramref name="recorders"/> if <paramref name="anyThreadKeptItsCore"/>
    /// (several threads: the first thread to finish its item takes the waiting one, so one thread that kept its core is enough for
    /// the bound), else a gap of any of them.
    /// </summary>
    public static (int Over, int OverWithGap, long[] Undisturbed) Classify(long[] starts, long[] waits, int count, long durationTicks, IReadOnlyCollection<GapRecorder> recorders, bool anyThreadKeptItsCore = false)
    {
        ArgumentNullException.ThrowIfNull(starts);
        ArgumentNullException.ThrowIfNull(waits);
        ArgumentNullException.ThrowIfNull(recorders);
        int over = 0;
        int overWithGap = 0;
        var undisturbed = new List<long>(count);
        for (int i = 0; i < count; i++)
        {
            long from = starts[i];
            long to = from + waits[i];
            int hit = 0;
            foreach (GapRecorder recorder in recorders)
            {
                foreach ((long gapFrom, long gapTo) in recorder._gaps)
                {
                    if (gapFrom < to && gapTo > from)
                    {
                        hit++;
                        break;
                    }
                }
            }

            bool disturbed = anyThreadKeptItsCore ? hit == recorders.Count : hit > 0;

            if (!disturbed)
            {
                undisturbed.Add(waits[i]);
            }

            if (waits[i] > durationTicks)
            {
                over++;
                if (disturbed)
                {
                    overWithGap++;
                }
            }
        }

        return (over, overWithGap, undisturbed.ToArray());
    }

    private void Add(long from, long to)
    {
        if (_gaps.Count < _gaps.Capacity)
        {
            _gaps.Add((from, to));
        }
    }
}
