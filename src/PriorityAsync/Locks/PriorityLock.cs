using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// An async mutual-exclusion lock that knows priority levels, shaped like Nito.AsyncEx's <c>AsyncLock</c>
/// (<c>using (await mutex.LockAsync()) { ... }</c>): waiters are granted the highest level first (FIFO within a level), and while code
/// at a level waits, the holder on the same scheduler runs at least at that level until it releases (priority inheritance), so urgent
/// code waits for the holder's critical section, not for everything queued between the two levels.
/// </summary>
/// <remarks>
/// <para>A <see cref="PrioritySemaphore"/> of one permit whose releaser names its holding, so that a second release is caught. Not
/// re-entrant: waiting for it from inside its own held region throws instead of waiting for ever. Code called or started inside the
/// region runs in it; start independent work with <see cref="Priority.Start(Func{CancellationToken, Task})"/> or
/// <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>. The region is the rest of the method that awaits
/// <see cref="LockAsync(CancellationToken)"/>: a helper async method that takes the lock and returns the releaser leaves its caller
/// outside it (the lock still excludes, but nobody can raise the caller's code), so await it where the work under it is done.</para>
/// <para>Uncontended, taking and releasing it allocate nothing. Off every priority scheduler it still excludes, without raising anyone.
/// See docs/concepts.md, "Priority inversion".</para>
/// </remarks>
public sealed class PriorityLock
{
    private readonly PrioritySemaphore _semaphore = new(1, 1, nameof(PriorityLock));

    /// <summary>Gets or sets the name used in messages, diagnostics and the inspector.</summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? Name
    {
        get => _semaphore.Name;
        init => _semaphore = new PrioritySemaphore(1, 1, nameof(PriorityLock)) { Name = value };
    }

    /// <summary>Gets whether the lock is held now (a moment's snapshot).</summary>
    public bool IsHeld => _semaphore.CurrentCount == 0;

    /// <summary>Gets the number of waiters (a moment's snapshot).</summary>
    public int WaitingCount => _semaphore.WaitingCount;

    /// <summary>For tests: the semaphore behind it.</summary>
    internal PrioritySemaphore Semaphore => _semaphore;

    /// <summary>Takes the lock: at once if it is free and nobody waits; otherwise behind the waiters of higher levels and the earlier ones
    /// of its own level, while the holder on the caller's scheduler runs at least at the caller's level.</summary>
    /// <param name="cancellationToken">Cancels the wait; the await then throws <see cref="OperationCanceledException"/>.</param>
    /// <returns>An awaitable to await once, whose result releases the lock when disposed: <c>using (await lk.LockAsync()) { ... }</c>.
    /// <see cref="LockAwaitable.AsTask"/> and <see cref="LockAwaitable.AsValueTask"/> give it as a task.</returns>
    /// <exception cref="InvalidOperationException">The calling code already holds the lock (the wait would never end).</exception>
    public LockAwaitable LockAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return new LockAwaitable(Task.FromCanceled<Releaser>(cancellationToken), 0);
        }

        LockWaiter? waiter = _semaphore.Acquire(Timeout.InfiniteTimeSpan, cancellationToken, out _, out long generation);
        return waiter is null ? new LockAwaitable(_semaphore, generation) : new LockAwaitable(waiter, 0);
    }

    /// <summary>Describes the lock.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => _semaphore.ToString();

    /// <summary>
    /// What <see cref="LockAsync(CancellationToken)"/> returns: await it once, and dispose its result to release the lock. Like a
    /// <see cref="ValueTask{TResult}"/> of <see cref="Releaser"/>, in 16 bytes, so an uncontended take is returned in registers
    /// (docs/design.md, [X-LOCK-FAST]).
    /// </summary>
    /// <remarks>A taken lock is its semaphore and the holding's number; a wait is its waiter. Awaiting it a second time, or converting it
    /// after it was awaited, is not supported (as with a <see cref="ValueTask{TResult}"/>): a second releaser of one holding throws when
    /// disposed.</remarks>
    public readonly struct LockAwaitable
    {
        private readonly object? _source; // PrioritySemaphore: taken; LockWaiter: waiting; a Task: cancelled before it began
        private readonly long _generation;

        internal LockAwaitable(object source, long generation)
        {
            _source = source;
            _generation = generation;
        }

        /// <summary>Gets whether the lock was taken, or the wait has ended, so that an <see langword="await"/> goes on at once (a moment's
        /// snapshot).</summary>
        public bool IsCompleted => GetAwaiter().IsCompleted;

        /// <summary>Gets the awaiter; called by <see langword="await"/>.</summary>
        /// <returns>The awaiter.</returns>
        public LockAwaiter GetAwaiter() => new(_source, _generation);

        /// <summary>The same wait as a <see cref="ValueTask{TResult}"/> (for <see cref="ValueTask{TResult}.ConfigureAwait(bool)"/> or an
        /// API that takes one), to be consumed instead of this, once. Awaited on its scheduler, a granted wait goes on in the lock's region
        /// as with <see langword="await"/> of this; with <c>ConfigureAwait(false)</c> it goes on in the thread pool.</summary>
        /// <returns>The wait, completed when the lock was taken at once.</returns>
        public ValueTask<Releaser> AsValueTask() => _source switch
        {
            PrioritySemaphore semaphore => new ValueTask<Releaser>(new Releaser(semaphore, _generation)),
            LockWaiter waiter => new ValueTask<Releaser>(waiter, 0),
            Task<Releaser> canceled => new ValueTask<Releaser>(canceled),
            _ => throw NotFromLockAsync(),
        };

        /// <summary>The same wait as a <see cref="Task{TResult}"/> (for <see cref="Task.WhenAny(Task[])"/> and the like), to be consumed
        /// instead of this, once. A task does not tell the lock where its awaiter goes on: code granted the lock through it holds the lock
        /// in its own context, not in the lock's region, so a more urgent waiter cannot raise it (the lock still excludes); await the lock
        /// itself where inheritance matters.</summary>
        /// <returns>The wait as a task.</returns>
        public Task<Releaser> AsTask() => AsValueTask().AsTask();

        internal static InvalidOperationException NotFromLockAsync() => new(
            "This PriorityLock.LockAwaitable was not returned by PriorityLock.LockAsync (it is a default value), so it waits for nothing. " +
            "Await what LockAsync returns.");
    }

    /// <summary>The awaiter of a <see cref="LockAwaitable"/>; <see langword="await"/> calls its members.</summary>
    public readonly struct LockAwaiter : ICriticalNotifyCompletion
    {
        private static readonly Action<object?> s_invoke = static continuation => ((Action)continuation!)();

        private readonly object? _source;
        private readonly long _generation;

        internal LockAwaiter(object? source, long generation)
        {
            _source = source;
            _generation = generation;
        }

        /// <summary>Gets whether the lock was taken, or the wait has ended.</summary>
        public bool IsCompleted => _source is not LockWaiter waiter || waiter.GetStatus(0) != ValueTaskSourceStatus.Pending; // a cancelled one has ended

        /// <summary>Ends the wait: the releaser of the holding, or the wait's exception.</summary>
        /// <returns>The releaser; dispose it once to release the lock.</returns>
        /// <exception cref="OperationCanceledException">The wait was cancelled.</exception>
        /// <exception cref="ObjectDisposedException">The waiting code's scheduler ended while it waited.</exception>
        /// <exception cref="InvalidOperationException">The awaitable is a default value, not one returned by
        /// <see cref="LockAsync(CancellationToken)"/>.</exception>
        public Releaser GetResult() => _source is PrioritySemaphore semaphore ? new Releaser(semaphore, _generation) : ResultOfWait();

        /// <summary>Schedules the continuation for when the wait ends, flowing the <see cref="ExecutionContext"/>.</summary>
        /// <param name="continuation">What to run then.</param>
        public void OnCompleted(Action continuation) =>
            OnCompleted(continuation, ValueTaskSourceOnCompletedFlags.FlowExecutionContext | ValueTaskSourceOnCompletedFlags.UseSchedulingContext);

        /// <summary>Schedules the continuation for when the wait ends, without flowing the <see cref="ExecutionContext"/> (the async
        /// method builder flows it).</summary>
        /// <param name="continuation">What to run then.</param>
        public void UnsafeOnCompleted(Action continuation) => OnCompleted(continuation, ValueTaskSourceOnCompletedFlags.UseSchedulingContext);

        private void OnCompleted(Action continuation, ValueTaskSourceOnCompletedFlags flags)
        {
            ArgumentNullException.ThrowIfNull(continuation);
            if (_source is LockWaiter waiter)
            {
                waiter.OnCompleted(s_invoke, continuation, 0, flags); // a granted wait resumes in its region ([X-LOCK])
            }
            else if ((flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0)
            {
                Task.CompletedTask.GetAwaiter().OnCompleted(continuation); // ended already: where a completed task's awaiter would run it
            }
            else
            {
                Task.CompletedTask.GetAwaiter().UnsafeOnCompleted(continuation);
            }
        }

        private Releaser ResultOfWait() => _source switch
        {
            LockWaiter waiter => ((IValueTaskSource<Releaser>)waiter).GetResult(0),
            Task<Releaser> canceled => canceled.GetAwaiter().GetResult(),
            _ => throw LockAwaitable.NotFromLockAsync(),
        };
    }

    /// <summary>Releases the holding it was returned for, once; a <see langword="using"/> statement disposes it.</summary>
    public readonly struct Releaser : IDisposable
    {
        private readonly PrioritySemaphore? _semaphore;
        private readonly long _generation;

        internal Releaser(PrioritySemaphore semaphore, long generation)
        {
            _semaphore = semaphore;
            _generation = generation;
        }

        /// <summary>Releases the lock; the next waiter (highest level first) takes it.</summary>
        /// <exception cref="InvalidOperationException">The releaser was released already, or was not returned by
        /// <see cref="LockAsync(CancellationToken)"/>.</exception>
        public void Dispose()
        {
            (_semaphore ?? throw NotFromLockAsync()).ReleaseCore(1, _generation);
        }

        private static InvalidOperationException NotFromLockAsync() => new(
            "This PriorityLock.Releaser was not returned by PriorityLock.LockAsync (it is a default value), so it releases nothing. " +
            "Release a lock with the releaser its LockAsync returned.");
    }
}
