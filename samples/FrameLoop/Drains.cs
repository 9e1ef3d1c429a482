using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;

namespace FrameLoop;

/// <summary>The kinds of continuation the frame loop runs, as PriorityAsync levels: higher runs first.</summary>
internal enum Kind
{
    Background = 0,
    Animation = 1,
    Input = 2,
}

/// <summary>How the main thread runs the continuations queued to it, once per frame: one of the two drains compared.</summary>
internal abstract class ContinuationDrain : IDisposable
{
    /// <summary>Gets the drain's name in the table.</summary>
    public abstract string Name { get; }

    /// <summary>Gets whether this is PriorityAsync's drain (its checkpoints know the budget).</summary>
    public abstract bool IsPriority { get; }

    /// <summary>Starts <paramref name="work"/> on the main thread as a continuation of <paramref name="kind"/>: its first part runs in
    /// the next drain, and its awaits come back as continuations of the same kind.</summary>
    public abstract void Start(Kind kind, Func<Task> work);

    /// <summary>The frame's drain.</summary>
    public abstract void Drain();

    /// <summary>A point where a long piece of work lets the frame go on: PriorityAsync's checkpoint, or <c>Task.Yield()</c>.</summary>
    public abstract Task YieldPoint();

    public abstract void Dispose();
}

/// <summary>
/// Godot's model (GodotSynchronizationContext): continuations queue first in first out whatever they are, and the frame runs
/// everything queued, including what they queue meanwhile, before it goes on.
/// </summary>
internal sealed class FifoDrain : ContinuationDrain
{
    private readonly FifoSynchronizationContext _context = new();
    private readonly SynchronizationContext? _previous = SynchronizationContext.Current;

    public FifoDrain() => SynchronizationContext.SetSynchronizationContext(_context);

    public override string Name => "FIFO, everything queued (Godot's model)";

    public override bool IsPriority => false;

    public override void Start(Kind kind, Func<Task> work) => _context.Post(static state => _ = ((Func<Task>)state!)(), work);

    public override void Drain() => _context.ExecutePendingContinuations();

    public override async Task YieldPoint() => await Task.Yield(); // back of the one queue: the same drain runs it

    public override void Dispose() => SynchronizationContext.SetSynchronizationContext(_previous);

    private sealed class FifoSynchronizationContext : SynchronizationContext
    {
        private readonly ConcurrentQueue<(SendOrPostCallback Callback, object? State)> _queue = new();

        public override void Post(SendOrPostCallback d, object? state) => _queue.Enqueue((d, state));

        public void ExecutePendingContinuations()
        {
            while (_queue.TryDequeue(out (SendOrPostCallback Callback, object? State) item))
            {
                item.Callback(item.State);
            }
        }
    }
}

/// <summary>PriorityAsync: a context attached to the main thread, drained once per frame, highest level first, within a budget; input
/// drains whatever the budget.</summary>
internal sealed class PriorityDrain : ContinuationDrain
{
    private readonly PriorityContextDriver _driver;
    private readonly TimeSpan _budget;

    public PriorityDrain(SimClock clock, TimeSpan budget)
    {
        _budget = budget;
        // begin-snippet: frame-loop-attach
        // Needs: the sample's PriorityDrain constructor around it, on the main thread before the first frame (clock: the frame clock).
        // The main thread's continuations now queue here, by level.
        _driver = PriorityContext.AttachToCurrentThread(new PriorityContextOptions
        {
            Name = "frame",
            Levels = 3, // 0 background loading, 1 animation, 2 input
            TimeProvider = clock, // the budget is measured on it (a test's virtual clock, or the system's)
            TimeSlice = null, // the frame's budget bounds the work; checkpoints yield once it is spent
        });
        // end-snippet
    }

    public override string Name => SampleFormat.Invariant($"PriorityAsync, {SampleFormat.Ms(_budget)} budget");

    public override bool IsPriority => true;

    public override void Start(Kind kind, Func<Task> work) => _ = _driver.Context.InvokeAsync(work, (int)kind);

    public override void Drain()
    {
        // begin-snippet: frame-loop-drain
        // Needs: the sample's frame, between update and render (the _driver attached above, the _budget of the command line).
        // The highest level first, background only while the budget lasts, input always.
        PriorityDrainResult drained = _driver.Drain(_budget, alwaysDrainFromLevel: (int)Kind.Input);
        // end-snippet
        _ = drained;
    }

    public override async Task YieldPoint() => await Priority.Checkpoint(); // yields once the frame's budget is spent

    public override void Dispose() => _driver.Dispose();
}
