using System;
using System.Threading;
using System.Threading.Tasks;
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
/// <see cref="PriorityScheduler.InvokeAsync(Func{Task}, int)"/>.</para>
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
    /// <returns>A <see cref="ValueTask{TResult}"/> to await once, whose result releases the lock when disposed.</returns>
    /// <exception cref="InvalidOperationException">The calling code already holds the lock (the wait would never end).</exception>
    public ValueTask<Releaser> LockAsync(CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<Releaser>(cancellationToken);
        }

        LockWaiter? waiter = _semaphore.Acquire(Timeout.InfiniteTimeSpan, cancellationToken, out _, out long generation);
        return waiter is null ? new ValueTask<Releaser>(new Releaser(_semaphore, generation)) : new ValueTask<Releaser>(waiter, 0);
    }

    /// <summary>Describes the lock.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString() => _semaphore.ToString();

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
            if (_semaphore is null)
            {
                throw new InvalidOperationException(
                    "This PriorityLock.Releaser was not returned by PriorityLock.LockAsync (it is a default value), so it releases nothing. " +
                    "Release a lock with the releaser its LockAsync returned.");
            }

            _semaphore.ReleaseCore(1, _generation);
        }
    }
}
