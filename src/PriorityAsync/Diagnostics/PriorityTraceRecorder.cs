using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;
using System.Threading;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// Records every work item that the loops and pools of this process run, as slices in a bounded in-memory buffer, and writes them in
/// the Chrome trace event format (opens in Perfetto and <c>chrome://tracing</c>): one track per <see cref="PriorityContext"/> and
/// level, one track per <see cref="PriorityThreadPool"/> thread.
/// </summary>
/// <remarks>
/// <para>The recorder never blocks a loop: a slot is claimed with one interlocked increment, and once the buffer is full further items
/// are counted in <see cref="OverflowCount"/> (and reported in the written trace), not recorded. The buffer is allocated up front.</para>
/// <para>At most one recorder records at a time, process-wide. While it records, each item costs two clock readings (often one:
/// see docs/observability.md; on a pool always two) and a cached name lookup. The recorder keeps a reference to each scheduler it saw
/// until it is disposed.</para>
/// <para>A pool runs several items of one level at once, and slices on one track must nest, so a pool's slices go on one track per
/// thread ("<c>name</c> #i", the thread's name), each slice carrying its level (category <c>level L</c>, argument <c>level</c>) and
/// its thread index (argument <c>thread</c>).</para>
/// </remarks>
public sealed class PriorityTraceRecorder : IDisposable
{
    /// <summary>The default <see cref="Capacity"/>: 1,048,576 items (about 40 MB).</summary>
    public const int DefaultCapacity = 1 << 20;

    /// <summary>The largest allowed capacity: 67,108,864 items.</summary>
    public const int MaxCapacity = 1 << 26;

    private static PriorityTraceRecorder? s_active;

    private readonly Slot[] _slots;
    private int _next;
    private long _overflow;

    private PriorityTraceRecorder(int capacity) => _slots = new Slot[capacity];

    /// <summary>Gets the number of slices the buffer holds at most.</summary>
    public int Capacity => _slots.Length;

    /// <summary>Gets the number of items recorded so far.</summary>
    public int RecordedCount => Math.Min(Volatile.Read(ref _next), _slots.Length);

    /// <summary>Gets the number of items that ran while the buffer was full, so were not recorded.</summary>
    public long OverflowCount => Interlocked.Read(ref _overflow);

    /// <summary>Gets whether this recorder is recording.</summary>
    public bool IsRecording => ReferenceEquals(Volatile.Read(ref s_active), this);

    internal static PriorityTraceRecorder? Active => Volatile.Read(ref s_active);

    /// <summary>Starts recording the items of every <see cref="PriorityContext"/> and <see cref="PriorityThreadPool"/> in the process.</summary>
    /// <param name="capacity">How many items to record at most; from 1 to <see cref="MaxCapacity"/>.</param>
    /// <returns>The recorder; stop it with <see cref="Stop"/> or <see cref="Dispose"/>, then write it out.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is outside 1 to <see cref="MaxCapacity"/>.</exception>
    /// <exception cref="InvalidOperationException">Another recorder is recording.</exception>
    public static PriorityTraceRecorder Start(int capacity = DefaultCapacity)
    {
        if (capacity is < 1 or > MaxCapacity)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, $"The trace recorder's capacity must be between 1 and {MaxCapacity} items.");
        }

        var recorder = new PriorityTraceRecorder(capacity);
        if (Interlocked.CompareExchange(ref s_active, recorder, null) is not null)
        {
            throw new InvalidOperationException("A PriorityTraceRecorder is already recording; stop it before starting another (one recorder per process).");
        }

        ContextRegistry.Refresh();
        return recorder;
    }

    /// <summary>Stops recording. Items that are running finish their slice; nothing is recorded afterwards. Idempotent.</summary>
    public void Stop()
    {
        if (Interlocked.CompareExchange(ref s_active, null, this) == this)
        {
            ContextRegistry.Refresh();
        }
    }

    /// <summary>Stops recording (see <see cref="Stop"/>).</summary>
    public void Dispose() => Stop();

    /// <summary>Writes the recorded slices as a Chrome trace event JSON document.</summary>
    /// <param name="destination">The stream to write to; it is left open.</param>
    /// <exception cref="ArgumentNullException"><paramref name="destination"/> is <see langword="null"/>.</exception>
    /// <remarks>Call it after <see cref="Stop"/>: slices of items still running are left out.</remarks>
    public void WriteChromeTrace(Stream destination)
    {
        ArgumentNullException.ThrowIfNull(destination);
        int count = RecordedCount;

        // Time zero: the earliest start. Tracks: one per context and level (a pool: per thread), numbered in order of first appearance.
        long origin = long.MaxValue;
        var contexts = new Dictionary<PriorityScheduler, int>(ReferenceEqualityComparer.Instance);
        var tracks = new SortedSet<(int ContextIndex, int Lane, bool Thread)>();
        for (int i = 0; i < count; i++)
        {
            ref Slot slot = ref _slots[i];
            if (Volatile.Read(ref slot.Committed) == 0)
            {
                continue;
            }

            origin = Math.Min(origin, slot.Start);
            if (!contexts.TryGetValue(slot.Context!, out int index))
            {
                index = contexts.Count;
                contexts.Add(slot.Context!, index);
            }

            tracks.Add(Track(index, slot));
        }

        var names = new string[contexts.Count];
        foreach (KeyValuePair<PriorityScheduler, int> pair in contexts)
        {
            names[pair.Value] = pair.Key.Name;
        }

        using var json = new Utf8JsonWriter(destination);
        json.WriteStartObject();
        json.WriteString("displayTimeUnit", "ns");
        json.WriteStartArray("traceEvents");
        json.WriteStartObject();
        json.WriteString("name", "process_name");
        json.WriteString("ph", "M");
        json.WriteNumber("pid", 1);
        json.WriteStartObject("args");
        json.WriteString("name", "PriorityAsync");
        json.WriteEndObject();
        json.WriteEndObject();
        foreach ((int contextIndex, int lane, bool thread) in tracks)
        {
            // Escalations first, then higher levels, as they run first; a pool's threads in their order.
            int tid = TrackId(contextIndex, lane, thread);
            string name = lane == EscalationLane ? $"{names[contextIndex]} / escalations" : thread ? $"{names[contextIndex]} #{lane}" : $"{names[contextIndex]} / level {lane}";
            WriteMetadata(json, "thread_name", tid, "name", name);
            WriteMetadata(json, "thread_sort_index", tid, "sort_index", (contextIndex * 1000) + (lane == EscalationLane ? 0 : thread ? 1 + lane : 999 - lane));
        }

        for (int i = 0; i < count; i++)
        {
            ref Slot slot = ref _slots[i];
            if (Volatile.Read(ref slot.Committed) == 0)
            {
                continue;
            }

            double microsecondsPerTick = 1_000_000.0 / slot.Context!.TimestampFrequency;
            json.WriteStartObject();
            json.WriteString("name", slot.Name);
            json.WriteString("cat", slot.Thread == EscalationLane ? "escalation" : "level " + slot.Level.ToString(System.Globalization.CultureInfo.InvariantCulture));
            json.WriteString("ph", "X");
            json.WriteNumber("ts", Math.Round((slot.Start - origin) * microsecondsPerTick, 3));
            json.WriteNumber("dur", Math.Round((slot.End - slot.Start) * microsecondsPerTick, 3));
            json.WriteNumber("pid", 1);
            (int _, int lane, bool onThread) = Track(contexts[slot.Context], slot);
            json.WriteNumber("tid", TrackId(contexts[slot.Context], lane, onThread));
            json.WriteStartObject("args");
            json.WriteString("context", slot.Context.Name);
            json.WriteString("kind", slot.Context.Kind);
            json.WriteNumber("level", slot.Level);
            if (slot.Thread >= 0)
            {
                json.WriteNumber("thread", slot.Thread);
            }

            json.WriteEndObject();
            json.WriteEndObject();
        }

        json.WriteEndArray();
        json.WriteStartObject("otherData");
        json.WriteNumber("recorded", count);
        json.WriteNumber("overflow", OverflowCount);
        json.WriteEndObject();
        json.WriteEndObject();
    }

    /// <summary>Writes the recorded slices to a file, as <see cref="WriteChromeTrace(Stream)"/> does.</summary>
    /// <param name="path">The file to create or overwrite.</param>
    public void WriteChromeTrace(string path)
    {
        using FileStream file = File.Create(path);
        WriteChromeTrace(file);
    }

    /// <summary>The slow path of a loop or a pool thread: one slice (<paramref name="thread"/>: the pool thread's index, -1 on a
    /// single loop). Never blocks, any number of threads at once; a full buffer counts the item as overflow.</summary>
    internal void Record(PriorityScheduler context, int thread, int level, SendOrPostCallback callback, object? state, long start, long end)
    {
        // Read first, so that a long overflow cannot wrap _next around.
        if (Volatile.Read(ref _next) >= _slots.Length)
        {
            Interlocked.Increment(ref _overflow);
            return;
        }

        int index = Interlocked.Increment(ref _next) - 1;
        if (index >= _slots.Length)
        {
            Interlocked.Increment(ref _overflow);
            return;
        }

        ref Slot slot = ref _slots[index];
        slot.Context = context;
        slot.Name = CallbackNames.Describe(callback, state);
        slot.Level = (short)level;
        slot.Thread = (short)thread;
        slot.Start = start;
        slot.End = end;
        Volatile.Write(ref slot.Committed, 1); // publishes the fields above to WriteChromeTrace
    }

    /// <summary>An escalation ([X-SEEN]): one slice on the scheduler's "escalations" track, from the raise to the drop back. Recorded as
    /// it ends, like any slice, and counted against the same capacity.</summary>
    internal void RecordEscalation(PriorityScheduler context, string name, long start, long end, int level)
    {
        if (Volatile.Read(ref _next) >= _slots.Length)
        {
            Interlocked.Increment(ref _overflow);
            return;
        }

        int index = Interlocked.Increment(ref _next) - 1;
        if (index >= _slots.Length)
        {
            Interlocked.Increment(ref _overflow);
            return;
        }

        ref Slot slot = ref _slots[index];
        slot.Context = context;
        slot.Name = name;
        slot.Level = (short)level;
        slot.Thread = EscalationLane;
        slot.Start = start;
        slot.End = end;
        Volatile.Write(ref slot.Committed, 1);
    }

    /// <summary>For benchmarks: records from the start of the buffer again (earlier slices are overwritten as they come).</summary>
    internal void Rewind()
    {
        Volatile.Write(ref _next, 0);
        Interlocked.Exchange(ref _overflow, 0);
    }

    // The lane of a scheduler's escalations: a thread index no pool has.
    private const short EscalationLane = -2;

    private static (int ContextIndex, int Lane, bool Thread) Track(int contextIndex, in Slot slot) =>
        slot.Thread == EscalationLane ? (contextIndex, EscalationLane, false)
        : slot.Thread >= 0 ? (contextIndex, slot.Thread, true)
        : (contextIndex, slot.Level, false);

    // A context's levels, a pool's threads (at most MaxThreadCount) and the escalations' track share one numbering per scheduler.
    private static int TrackId(int contextIndex, int lane, bool thread) =>
        (contextIndex * (PriorityContextOptions.MaxLevels + PriorityThreadPoolOptions.MaxThreadCount + 1)) +
        (lane == EscalationLane ? PriorityContextOptions.MaxLevels + PriorityThreadPoolOptions.MaxThreadCount : (thread ? PriorityContextOptions.MaxLevels : 0) + lane) + 1;

    private static void WriteMetadata(Utf8JsonWriter json, string name, int tid, string argName, object value)
    {
        json.WriteStartObject();
        json.WriteString("name", name);
        json.WriteString("ph", "M");
        json.WriteNumber("pid", 1);
        json.WriteNumber("tid", tid);
        json.WriteStartObject("args");
        if (value is int number)
        {
            json.WriteNumber(argName, number);
        }
        else
        {
            json.WriteString(argName, (string)value);
        }

        json.WriteEndObject();
        json.WriteEndObject();
    }

    private struct Slot
    {
        public PriorityScheduler? Context;
        public string? Name;
        public long Start;
        public long End;
        public short Level; // at most 64 levels
        public short Thread; // a pool thread's index (at most 256 threads); -1 on a single loop; EscalationLane. Two shorts keep a slot at 40 bytes.
        public int Committed;
    }
}
