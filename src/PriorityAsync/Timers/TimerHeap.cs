using System;
using System.Diagnostics;

namespace PriorityAsync.Internal;

/// <summary>
/// A binary min-heap of <see cref="TimerEntry"/> keyed by (due timestamp, arming sequence number): the earliest due time first,
/// and among equal due times the one armed first (FIFO ties). Each entry knows its index, so removal (Dispose, Change, a cancelled
/// delay) is O(log n). Not thread-safe: the owning scheduler guards it with its timer lock.
/// </summary>
internal sealed class TimerHeap
{
    private TimerEntry[] _items = new TimerEntry[4];

    public int Count { get; private set; }

    public TimerEntry? Min => Count == 0 ? null : _items[0];

    public void Insert(TimerEntry entry)
    {
        Debug.Assert(entry.HeapIndex < 0, "an entry is in the heap at most once");
        if (Count == _items.Length)
        {
            Array.Resize(ref _items, _items.Length * 2);
        }

        _items[Count] = entry;
        entry.HeapIndex = Count;
        Count++;
        SiftUp(entry.HeapIndex);
    }

    public TimerEntry RemoveMin()
    {
        TimerEntry min = _items[0];
        RemoveAt(0);
        return min;
    }

    /// <summary>Removes <paramref name="entry"/> if it is in the heap; returns whether it was.</summary>
    public bool Remove(TimerEntry entry)
    {
        int index = entry.HeapIndex;
        if (index < 0)
        {
            return false;
        }

        Debug.Assert(ReferenceEquals(_items[index], entry));
        RemoveAt(index);
        return true;
    }

    private void RemoveAt(int index)
    {
        TimerEntry removed = _items[index];
        removed.HeapIndex = -1;
        Count--;
        if (index != Count)
        {
            TimerEntry last = _items[Count];
            _items[index] = last;
            last.HeapIndex = index;
            _items[Count] = null!;
            if (!SiftUp(index))
            {
                SiftDown(index);
            }
        }
        else
        {
            _items[Count] = null!;
        }
    }

    private static bool Less(TimerEntry a, TimerEntry b) => a.Due < b.Due || (a.Due == b.Due && a.Sequence < b.Sequence);

    private bool SiftUp(int index)
    {
        bool moved = false;
        TimerEntry entry = _items[index];
        while (index > 0)
        {
            int parent = (index - 1) / 2;
            if (!Less(entry, _items[parent]))
            {
                break;
            }

            _items[index] = _items[parent];
            _items[index].HeapIndex = index;
            index = parent;
            moved = true;
        }

        _items[index] = entry;
        entry.HeapIndex = index;
        return moved;
    }

    private void SiftDown(int index)
    {
        TimerEntry entry = _items[index];
        while (true)
        {
            int child = (2 * index) + 1;
            if (child >= Count)
            {
                break;
            }

            if (child + 1 < Count && Less(_items[child + 1], _items[child]))
            {
                child++;
            }

            if (!Less(_items[child], entry))
            {
                break;
            }

            _items[index] = _items[child];
            _items[index].HeapIndex = index;
            index = child;
        }

        _items[index] = entry;
        entry.HeapIndex = index;
    }
}
