using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// An unbounded channel for async methods that all run on one single-threaded <see cref="SynchronizationContext"/>: no locks, no
/// <c>TaskCompletionSource</c>, no allocation per message. A reader that finds it empty parks its continuation (the state machine's
/// cached delegate); the next <see cref="Write"/> posts that continuation to the reader's captured context, so every message
/// that wakes a reader is one hop through the context's queue.
/// </summary>
/// <remarks>Single-threaded by contract: every member must be called on the context's thread. One reader at a time.</remarks>
internal sealed class LoopChannel<T>
{
    private static readonly SendOrPostCallback s_resume = static state => ((Action)state!)();

    private readonly Queue<T> _items = new();
    private Action? _waiter;
    private SynchronizationContext? _waiterContext;

    public void Write(T item)
    {
        _items.Enqueue(item);
        if (_waiter is { } waiter)
        {
            SynchronizationContext context = _waiterContext!;
            _waiter = null;
            _waiterContext = null;
            context.Post(s_resume, waiter); // resume the reader through the context's queue: a hop, never a nested call
        }
    }

    public ReadAwaiter ReadAsync() => new(this);

    /// <summary>Awaitable and awaiter in one. Does not flow <see cref="ExecutionContext"/> (benchmark primitive).</summary>
    public readonly struct ReadAwaiter : ICriticalNotifyCompletion
    {
        private readonly LoopChannel<T> _channel;

        internal ReadAwaiter(LoopChannel<T> channel) => _channel = channel;

        public bool IsCompleted => _channel._items.Count > 0;

        public ReadAwaiter GetAwaiter() => this;

        public void OnCompleted(Action continuation) => UnsafeOnCompleted(continuation);

        public void UnsafeOnCompleted(Action continuation)
        {
            if (_channel._waiter is not null)
            {
                throw new InvalidOperationException("LoopChannel supports one waiting reader at a time.");
            }

            _channel._waiterContext = SynchronizationContext.Current
                ?? throw new InvalidOperationException("LoopChannel must be read inside a single-threaded SynchronizationContext.");
            _channel._waiter = continuation;
        }

        public T GetResult() => _channel._items.Dequeue();
    }
}
