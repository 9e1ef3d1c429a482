using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Numerics;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync.Internal;

namespace PriorityAsync;

/// <summary>
/// An async semaphore that knows priority levels, shaped like <see cref="SemaphoreSlim.WaitAsync()"/>: waiters are granted the highest
/// level first (FIFO within a level), and while code at a level waits, the code holding the semaphore on the same scheduler runs at
/// least at that level until it releases (priority inheritance), so urgent code waits for the holder's critical section only, not for
/// everything queued between the two levels.
/// </summary>
/// <remarks>
/// <para>Code that takes it on a priority scheduler runs its held region in a flow of its own, until it releases: the work the region
/// has queued, and what it queues, is raised while a more urgent waiter waits. Code off every priority scheduler may take it too, but is
/// not raised (nothing schedules it); a waiter off every scheduler ranks at level 0. Across two schedulers the levels are not comparable:
/// waiters are still ranked by their level numbers, but a holder is raised only by waiters of its own scheduler.</para>
/// <para>Uncontended, <see cref="WaitAsync(CancellationToken)"/> and <see cref="Release()"/> allocate nothing. Thread safety: every member
/// may be called from any thread. See docs/concepts.md, "Priority inversion".</para>
/// </remarks>
public sealed class PrioritySemaphore
{
    // [X-LOCK-FAST]: the state word. Bit 0 (Slow): the bookkeeping is under _lock (waiters, or holdings in _holdings), so the lock-free
    // paths stand aside; bit 1 (Fast): one holding, taken lock-free, described by _fastCaller once _fastPublished names it; bit 2
    // (Claimed): that holding's region names its holder (once _claimPublished names it), so its release clears the field first (a
    // semaphore of more permits: under the lock); then the free permits (as many bits as the maximum count needs), then the number of
    // the latest holding (the rest, at least 30 bits).
    private const long Slow = 1;
    private const long Fast = 2;
    private const long Claimed = 4;
    private const long CountOne = 8;
    private const int CountShift = 3;

    // [X-LOCK]: _waiters, _holdings and the regions under _lock, and the state while Slow is set. No user code and no queueing under
    // it; the graph's lock may be taken under it (lock order: this, the graph's, a node's spin lock).
    private readonly Lock _lock = new();
    private readonly int _maxCount;
    private readonly string _kind;
    private readonly long _countMask;
    private readonly int _generationShift;
    private readonly long _generationOne;
    private readonly ulong _generationLimit; // a state at or above it holds the highest number: the next take goes under the lock, which wraps
    private long _state;
    private long _fastPublished; // the number of the lock-free holding whose _fastCaller is written
    private long _claimPublished; // the number of the lock-free holding whose region's field is written
    private PrioritySynchronizationContext? _fastCaller;
    private HoldingSet _holdings;
    private List<LockWaiter>? _waiters;
    private long _sequence;
    private PriorityScheduler? _regionScheduler;
    private WorkFlow?[]? _regions;
    private List<(PriorityScheduler Scheduler, WorkFlow?[] Regions)>? _otherRegions;

    /// <summary>Creates a semaphore with <paramref name="initialCount"/> free permits and no maximum.</summary>
    /// <param name="initialCount">The permits free at first, zero or more.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="initialCount"/> is negative.</exception>
    public PrioritySemaphore(int initialCount)
        : this(initialCount, int.MaxValue)
    {
    }

    /// <summary>Creates a semaphore with <paramref name="initialCount"/> free permits and at most <paramref name="maxCount"/>.</summary>
    /// <param name="initialCount">The permits free at first, from 0 to <paramref name="maxCount"/>.</param>
    /// <param name="maxCount">The most permits, 1 or more.</param>
    /// <exception cref="ArgumentOutOfRangeException">A count is out of range.</exception>
    public PrioritySemaphore(int initialCount, int maxCount)
        : this(initialCount, maxCount, nameof(PrioritySemaphore))
    {
    }

    internal PrioritySemaphore(int initialCount, int maxCount, string kind)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxCount, 1);
        if (initialCount < 0 || initialCount > maxCount)
        {
            throw new ArgumentOutOfRangeException(
                nameof(initialCount), initialCount, $"The initial count must be between 0 and the maximum count ({maxCount}).");
        }

        _maxCount = maxCount;
        _kind = kind;
        int countBits = 32 - BitOperations.LeadingZeroCount((uint)maxCount);
        _countMask = ((1L << countBits) - 1) << CountShift;
        _generationShift = CountShift + countBits;
        _generationOne = 1L << _generationShift;
        _generationLimit = ulong.MaxValue << _generationShift;
        _state = (long)initialCount << CountShift;
    }

    /// <summary>Gets or sets the name used in messages, diagnostics and the inspector.</summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? Name { get; init; }

    /// <summary>Gets the number of free permits (a moment's snapshot).</summary>
    public int CurrentCount => CountOf(Volatile.Read(ref _state));

    /// <summary>Gets the number of waiters (a moment's snapshot).</summary>
    public int WaitingCount
    {
        get
        {
            lock (_lock)
            {
                return _waiters?.Count ?? 0;
            }
        }
    }

    /// <summary>Whether the next uncontended take and release may run lock-free (nothing held under the lock, nobody waits), for tests: a
    /// flag left set would not be wrong, only slower ([X-LOCK-FAST]).</summary>
    internal bool LockFreePathsOpen => (Volatile.Read(ref _state) & Slow) == 0;

    /// <summary>Whether the lock-free holding has named its holder in its region's field, for tests ([X-LOCK-FAST], "The lazy
    /// claim").</summary>
    internal bool LockFreeHoldingClaimed => (Volatile.Read(ref _state) & (Fast | Claimed)) == (Fast | Claimed);

    /// <summary>"the PrioritySemaphore 'db'", for messages.</summary>
    internal string Subject => Name is null ? $"the {_kind}" : $"the {_kind} '{Name}'";

    private string SubjectAtStart => Name is null ? $"The {_kind}" : $"The {_kind} '{Name}'";

    /// <summary>Waits for a permit: at once if one is free and nobody waits; otherwise behind the waiters of higher levels and the earlier
    /// ones of its own level, while the holders on the caller's scheduler run at least at the caller's level.</summary>
    /// <returns>A <see cref="ValueTask"/> to await once.</returns>
    /// <exception cref="InvalidOperationException">A semaphore with a maximum count of 1 is waited for by the code that holds it (the
    /// wait would never end).</exception>
    public ValueTask WaitAsync() => WaitAsync(CancellationToken.None);

    /// <summary>Waits for a permit; see <see cref="WaitAsync()"/>.</summary>
    /// <param name="cancellationToken">Cancels the wait; the await then throws <see cref="OperationCanceledException"/>.</param>
    /// <returns>A <see cref="ValueTask"/> to await once.</returns>
    /// <exception cref="InvalidOperationException">A semaphore with a maximum count of 1 is waited for by the code that holds it.</exception>
    public ValueTask WaitAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        LockWaiter? waiter = Acquire(Timeout.InfiniteTimeSpan, cancellationToken, out _, out _);
        return waiter is null ? default : new ValueTask(waiter, 0);
    }

    /// <summary>Waits for a permit for at most <paramref name="timeout"/>; see <see cref="WaitAsync()"/>.</summary>
    /// <param name="timeout">How long to wait, or <see cref="Timeout.InfiniteTimeSpan"/>; on a priority scheduler it runs on the
    /// scheduler's own clock (<see cref="PriorityScheduler.TimeProvider"/>).</param>
    /// <returns>Whether a permit was taken.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than infinite) or too large.</exception>
    public ValueTask<bool> WaitAsync(TimeSpan timeout) => WaitAsync(timeout, CancellationToken.None);

    /// <summary>Waits for a permit for at most <paramref name="timeout"/>; see <see cref="WaitAsync(TimeSpan)"/>.</summary>
    /// <param name="timeout">How long to wait, or <see cref="Timeout.InfiniteTimeSpan"/>.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>Whether a permit was taken.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeout"/> is negative (other than infinite) or too large.</exception>
    public ValueTask<bool> WaitAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        long milliseconds = (long)timeout.TotalMilliseconds;
        if (milliseconds is < -1 or > int.MaxValue)
        {
            throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "The timeout must be between 0 and Int32.MaxValue milliseconds, or Timeout.InfiniteTimeSpan.");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<bool>(cancellationToken);
        }

        LockWaiter? waiter = Acquire(timeout, cancellationToken, out bool acquired, out _);
        return waiter is null ? new ValueTask<bool>(acquired) : new ValueTask<bool>(waiter, 0);
    }

    /// <summary>Waits for a permit for at most <paramref name="millisecondsTimeout"/> milliseconds (-1: for ever); see
    /// <see cref="WaitAsync(TimeSpan)"/>.</summary>
    /// <param name="millisecondsTimeout">How long to wait, in milliseconds, or -1.</param>
    /// <returns>Whether a permit was taken.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="millisecondsTimeout"/> is less than -1.</exception>
    public ValueTask<bool> WaitAsync(int millisecondsTimeout) => WaitAsync(millisecondsTimeout, CancellationToken.None);

    /// <summary>Waits for a permit for at most <paramref name="millisecondsTimeout"/> milliseconds (-1: for ever); see
    /// <see cref="WaitAsync(TimeSpan)"/>.</summary>
    /// <param name="millisecondsTimeout">How long to wait, in milliseconds, or -1.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>Whether a permit was taken.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="millisecondsTimeout"/> is less than -1.</exception>
    public ValueTask<bool> WaitAsync(int millisecondsTimeout, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(millisecondsTimeout, -1);
        return WaitAsync(TimeSpan.FromMilliseconds(millisecondsTimeout), cancellationToken);
    }

    /// <summary>Releases one permit: the holding of the calling code's region if it holds one, else the oldest; the next waiter
    /// (highest level first) is granted it.</summary>
    /// <remarks>Holdings at one level of one scheduler share a region, and a release names no holding (as with
    /// <see cref="SemaphoreSlim"/>): of several there it ends the oldest, and the calling code goes on in the context that holding's
    /// taker had. The level is the same; when the takers ran in different flows (docs/concepts.md, "Priority inversion"), their flows
    /// can swap. A <see cref="PriorityLock"/> has one holding, and its releaser names it.</remarks>
    /// <returns>The count of free permits before the call.</returns>
    /// <exception cref="SemaphoreFullException">The count would exceed the maximum (more releases than waits).</exception>
    public int Release() => Release(1);

    /// <summary>Releases <paramref name="releaseCount"/> permits; see <see cref="Release()"/>.</summary>
    /// <param name="releaseCount">How many, 1 or more.</param>
    /// <returns>The count of free permits before the call.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="releaseCount"/> is less than 1.</exception>
    /// <exception cref="SemaphoreFullException">The count would exceed the maximum (more releases than waits).</exception>
    public int Release(int releaseCount)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(releaseCount, 1);
        return ReleaseCore(releaseCount, generation: 0);
    }

    /// <summary>Describes the semaphore.</summary>
    /// <returns>A description for diagnostics.</returns>
    public override string ToString()
    {
        lock (_lock)
        {
            long state = Volatile.Read(ref _state);
            int held = _holdings.Count + ((state & Fast) != 0 ? 1 : 0);
            return $"{_kind}{(Name is null ? string.Empty : $" '{Name}'")}: {CountOf(state)} free, {held} held, {_waiters?.Count ?? 0} waiting";
        }
    }

    // ---- Taking ([X-LOCK]) ------------------------------------------------------------------------------------------------------

    /// <summary>Takes a permit at once (returns null, <paramref name="acquired"/> true, the holding's <paramref name="generation"/>),
    /// gives up at once (a zero timeout: null, false), or queues a waiter and returns it.</summary>
    internal LockWaiter? Acquire(TimeSpan timeout, CancellationToken cancellationToken, out bool acquired, out long generation)
    {
        // The uncontended path ([X-LOCK-FAST]): one compare-and-swap of the state when a permit is free, nobody waits and nothing is
        // held, then the holding published for a waiter that may come; the region entered after it. Anything else: under the lock.
        var caller = SynchronizationContext.Current as PrioritySynchronizationContext;
        long state = Volatile.Read(ref _state);
        if ((state & (Slow | Fast)) == 0 && (state & _countMask) != 0 && (ulong)state < _generationLimit)
        {
            WorkFlow? region = null;
            if (caller is null || (region = KnownRegion(caller)) is not null)
            {
                long taken = (state - CountOne + _generationOne) | Fast;
                if (Interlocked.CompareExchange(ref _state, taken, state) == state)
                {
                    generation = GenerationOf(taken);
                    if (!ReferenceEquals(_fastCaller, caller))
                    {
                        _fastCaller = caller; // one write barrier less while the same context takes it again
                    }

                    Volatile.Write(ref _fastPublished, generation); // a waiter under the lock waits for it ([X-LOCK-FAST])
                    if (region is not null)
                    {
                        SynchronizationContext.SetSynchronizationContext(region); // its holder is claimed when first needed
                    }

                    acquired = true;
                    return null;
                }
            }
        }

        return AcquireContended(caller, timeout, cancellationToken, out acquired, out generation);
    }

    private LockWaiter? AcquireContended(
        PrioritySynchronizationContext? caller, TimeSpan timeout, CancellationToken cancellationToken, out bool acquired, out long generation)
    {
        generation = 0;
        var batch = default(EscalationBatch);
        LockWaiter? waiter = null;
        WorkFlow? region = null;
        bool claimed = false;
        lock (_lock)
        {
            long state = TakeBookkeeping();
            try
            {
                if (CountOf(state) > 0 && _waiters is not { Count: > 0 })
                {
                    SetCount(CountOf(state) - 1);
                    region = AddHolding(caller, out generation, out claimed); // released meanwhile, or held by more than one
                }
                else if (timeout == TimeSpan.Zero)
                {
                    acquired = false;
                    return null;
                }
                else
                {
                    if (timeout == Timeout.InfiniteTimeSpan && !cancellationToken.CanBeCanceled)
                    {
                        ThrowIfWaitingOnItself(caller); // a wait that can end by itself (a timeout, a token) is not a certain deadlock
                    }

                    waiter = new LockWaiter(this, caller, ++_sequence, Stopwatch.GetTimestamp());
                    (_waiters ??= []).Add(waiter);
                    LendTo(waiter, ref batch); // the holders on the waiter's scheduler run at its level from now on
                }
            }
            finally
            {
                GiveBackBookkeeping();
            }
        }

        batch.Run();
        if (waiter is not null)
        {
            caller?.Scheduler.TrackPending(waiter); // its scheduler's end ends the wait ([E-END], step 3); at once if it has ended
            waiter.Watch(timeout, cancellationToken);
            acquired = false;
            return waiter;
        }

        if (region is not null)
        {
            var enter = default(EscalationBatch);
            EnterRegion(region, caller!.Node, claimed, ref enter);
            enter.Run();
            SynchronizationContext.SetSynchronizationContext(region);
        }

        acquired = true;
        return null;
    }

    /// <summary>[X-LOCK]: outside the lock, a holding recorded under it enters its region's graph: a claimed one recomputes the region if
    /// its holder is raised already; the others are the holder's children (a second holding in one region, [X-LOCK-FAST]).</summary>
    private static void EnterRegion(WorkFlow region, IEscalationNode? holder, bool claimed, ref EscalationBatch batch)
    {
        if (claimed)
        {
            region.AfterClaim(holder!);
        }
        else if (holder is not null && !ReferenceEquals(holder, region))
        {
            EscalationGraph.Attach(region, holder, ref batch);
        }
    }

    /// <summary>Under the lock: records a holding for code running in <paramref name="caller"/> and returns its region (null off
    /// every priority scheduler); the holding is <paramref name="claimed"/> when it named its holder in the region's free field.</summary>
    private WorkFlow? AddHolding(PrioritySynchronizationContext? caller, out long generation, out bool claimed)
    {
        long state = Volatile.Read(ref _state);
        generation = (ulong)state >= _generationLimit ? 1 : GenerationOf(state) + 1; // numbers wrap after 2^30 holdings at least; 0 is "any"
        Volatile.Write(ref _state, (state & ((1L << _generationShift) - 1)) | (generation << _generationShift));
        WorkFlow? region = caller is null ? null : RegionFor(caller.Scheduler, caller.Level);
        claimed = ClaimUnderLock(region, caller);
        _holdings.Add(new Holding(region, caller, generation, claimed));
        return region;
    }

    /// <summary>Under the lock: names <paramref name="caller"/>'s node in <paramref name="region"/>'s field if no holding there has
    /// ([X-LOCK-FAST]: the field is written under the lock, or by the claim of the lock-free holding, and cleared under the lock).</summary>
    private static bool ClaimUnderLock(WorkFlow? region, PrioritySynchronizationContext? caller)
    {
        if (region is null || caller!.Node is not { } holder || ReferenceEquals(holder, region) || region.HasClaim)
        {
            return false;
        }

        region.Claim(holder);
        return true;
    }

    /// <summary>[X-LOCK-FAST], "The lazy claim": <paramref name="region"/>'s field names nobody. If the lock-free holding is there, by a
    /// flow, name its holder now (first setting Claimed, so that its release goes under the lock, which clears the field) and return it.
    /// Otherwise return what the field holds once no claim is on its way: a holding moved under the lock is claimed there, and a claim
    /// under way is two stores from done (no lock, no user code), so it is waited for, as <see cref="TakeBookkeeping"/> waits.</summary>
    internal IEscalationNode? ClaimLockFreeHolding(WorkFlow region)
    {
        var spin = default(SpinWait);
        while (true)
        {
            long state = Volatile.Read(ref _state);
            long generation = GenerationOf(state);
            if ((state & Fast) == 0 || Volatile.Read(ref _fastPublished) != generation)
            {
                return region.Claimant; // nothing lock-free (the list's holdings were claimed under the lock), or not in a region yet
            }

            if ((state & (Slow | Claimed)) != 0)
            {
                if ((state & Slow) == 0 && Volatile.Read(ref _claimPublished) == generation)
                {
                    return region.Claimant; // claimed (this region's field, or another's)
                }

                spin.SpinOnce(); // claimed and not yet written, or being moved under the lock (and claimed there)
                continue;
            }

            PrioritySynchronizationContext? caller = _fastCaller; // the holding's: a new one would have changed the state we swap from
            if (caller?.Node is not { } holder || ReferenceEquals(holder, region) || !ReferenceEquals(KnownRegion(caller), region))
            {
                return null; // level code (nothing to raise), or a holding in another region: every field is free ([X-LOCK-FAST])
            }

            if (Interlocked.CompareExchange(ref _state, state | Claimed, state) == state)
            {
                region.Claim(holder);
                Volatile.Write(ref _claimPublished, generation);
                return holder;
            }
        }
    }

    // ---- The state word ([X-LOCK-FAST]) -----------------------------------------------------------------------------------------

    private int CountOf(long state) => (int)((state & _countMask) >> CountShift);

    private long GenerationOf(long state) => (long)((ulong)state >> _generationShift);

    /// <summary>Under the lock: the state's count (Slow is set, so no lock-free path writes the state meanwhile).</summary>
    private void SetCount(int count)
    {
        long state = Volatile.Read(ref _state);
        Volatile.Write(ref _state, (state & ~_countMask) | ((long)count << CountShift));
    }

    /// <summary>Under the lock, first: sets Slow, so the lock-free paths stand aside until <see cref="GiveBackBookkeeping"/>, and moves
    /// a lock-free holding into <see cref="_holdings"/> (waiting the few stores until its taker has published it). Returns the state.</summary>
    private long TakeBookkeeping()
    {
        long state = Volatile.Read(ref _state);
        while ((state & Slow) == 0)
        {
            long seen = Interlocked.CompareExchange(ref _state, state | Slow, state);
            if (seen == state)
            {
                state |= Slow;
                break;
            }

            state = seen;
        }

        if ((state & Fast) != 0)
        {
            long generation = GenerationOf(state);
            var spin = default(SpinWait);
            while (Volatile.Read(ref _fastPublished) != generation)
            {
                spin.SpinOnce(); // its taker won the state and is between two stores (no lock, no user code)
            }

            PrioritySynchronizationContext? caller = _fastCaller;
            WorkFlow? region = caller is null ? null : RegionFor(caller.Scheduler, caller.Level);
            bool claimed;
            if ((state & Claimed) != 0)
            {
                while (Volatile.Read(ref _claimPublished) != generation)
                {
                    spin.SpinOnce(); // its claimer won the state and is between two stores
                }

                claimed = true;
            }
            else
            {
                claimed = ClaimUnderLock(region, caller); // hooks no longer claim lock-free (Slow is set): the list's holdings are claimed
            }

            _holdings.Add(new Holding(region, caller, generation, claimed));
            state &= ~(Fast | Claimed);
            Volatile.Write(ref _state, state);
        }

        return state;
    }

    /// <summary>Under the lock, last: once nothing is held and nobody waits, the lock-free paths may run again.</summary>
    private void GiveBackBookkeeping()
    {
        if (_holdings.Count == 0 && _waiters is not { Count: > 0 })
        {
            Volatile.Write(ref _state, Volatile.Read(ref _state) & ~Slow);
        }
    }

    /// <summary>Without the lock: the region of <paramref name="caller"/>'s scheduler and level if it exists already on the first
    /// scheduler the semaphore was taken on (written under the lock, read here); otherwise null, and the take goes under the lock.</summary>
    private WorkFlow? KnownRegion(PrioritySynchronizationContext caller)
    {
        WorkFlow?[]? regions = Volatile.Read(ref _regions);
        return regions is not null && ReferenceEquals(_regionScheduler, caller.Scheduler) ? Volatile.Read(ref regions[caller.Level]) : null;
    }

    /// <summary>Under the lock: a semaphore of one permit, waited for by code in the region of its only holding, would wait for ever.</summary>
    private void ThrowIfWaitingOnItself(PrioritySynchronizationContext? caller)
    {
        if (_maxCount == 1 && caller is FlowContext { Flow: var flow } && _holdings.Count == 1 && ReferenceEquals(_holdings.First.Region, flow))
        {
            throw new InvalidOperationException(
                $"{SubjectAtStart} is already held by the code that is waiting for it (it was taken at level {_holdings.First.Region!.OwnLevel} " +
                "of this flow of work and is released only when that code goes on), so the wait would never end: it is not re-entrant. " +
                "Release it before taking it again, or pass what needs it to code that does not hold it. Code called or started inside " +
                "the held region runs in it; start independent work with Priority.Start or InvokeAsync.");
        }
    }

    // ---- Releasing --------------------------------------------------------------------------------------------------------

    /// <summary>Ends <paramref name="releaseCount"/> holdings (the one numbered <paramref name="generation"/> when not 0: a
    /// <see cref="PriorityLock"/>'s releaser) and grants the freed permits to the best waiters ([X-LOCK]).</summary>
    internal int ReleaseCore(int releaseCount, long generation)
    {
        // The uncontended path ([X-LOCK-FAST]): the lock-free holding, unclaimed, ends; nobody waits (Slow is clear). One
        // compare-and-swap of the state, and the code's context given back after it: nothing named the holder, so nothing is undone in
        // the graph. Its taker's context is read before: once the state is swapped, the next taker writes it.
        long state = Volatile.Read(ref _state);
        if (releaseCount == 1 && (state & (Slow | Fast | Claimed)) == Fast && (generation == 0 || GenerationOf(state) == generation)
            && CountOf(state) < _maxCount && Volatile.Read(ref _fastPublished) == GenerationOf(state))
        {
            PrioritySynchronizationContext? caller = _fastCaller;
            if (Interlocked.CompareExchange(ref _state, (state + CountOne) & ~Fast, state) == state)
            {
                if (caller is not null)
                {
                    GiveBackContext(caller);
                }

                return CountOf(state);
            }
        }

        return ReleaseClaimedOrSlow(releaseCount, generation);
    }

    /// <summary>After the lock-free release: code releasing from inside the holding's region goes on in the context it took it in.</summary>
    private void GiveBackContext(PrioritySynchronizationContext caller)
    {
        if (SynchronizationContext.Current is FlowContext current && ReferenceEquals(current.Flow, KnownRegion(caller)))
        {
            Ended.GiveBackContext(caller, current);
        }
    }

    /// <summary>A lock's claimed lock-free holding ends lock-free too: its region's field is cleared first, while its permit is held (no
    /// other holding can claim the field meanwhile: a lock has one), then the state is swapped ([X-LOCK-FAST]). Anything else, and a
    /// semaphore's claimed holding, ends under the lock.</summary>
    private int ReleaseClaimedOrSlow(int releaseCount, long generation)
    {
        long state = Volatile.Read(ref _state);
        if (_maxCount == 1 && releaseCount == 1 && (state & (Slow | Fast | Claimed)) == (Fast | Claimed)
            && (generation == 0 || GenerationOf(state) == generation) && CountOf(state) == 0
            && Volatile.Read(ref _fastPublished) == GenerationOf(state) && Volatile.Read(ref _claimPublished) == GenerationOf(state))
        {
            PrioritySynchronizationContext caller = _fastCaller!; // a claimed holding is a flow's
            WorkFlow region = KnownRegion(caller)!;
            region.Unclaim();
            if (Interlocked.CompareExchange(ref _state, (state + CountOne) & ~(Fast | Claimed), state) == state)
            {
                region.AfterUnclaim(); // a link made for the holding goes (or is the next holder's by now: [X-LOCK-FAST])
                GiveBackContext(caller);
                return 0;
            }
        }

        return ReleaseSlow(releaseCount, generation);
    }

    private int ReleaseSlow(int releaseCount, long generation)
    {
        var current = SynchronizationContext.Current as FlowContext;
        var batch = default(EscalationBatch);
        var ended = default(Ended);
        var granted = default(Granted);
        int previousCount;
        lock (_lock)
        {
            int count = CountOf(TakeBookkeeping());
            try
            {
                int index = generation == 0 ? -1 : _holdings.IndexOf(generation);
                if (generation != 0 && index < 0)
                {
                    throw new InvalidOperationException(
                        $"{SubjectAtStart} was released by a releaser whose holding has already ended: it was released twice. Dispose the " +
                        "releaser that LockAsync returned exactly once (a using statement does).");
                }

                if (_maxCount - count < releaseCount)
                {
                    throw new SemaphoreFullException(
                        $"{SubjectAtStart} has {count} free permits of at most {_maxCount}; releasing {releaseCount} more would exceed it. " +
                        "Each Release must match a completed WaitAsync (it was released without being held, or twice).");
                }

                previousCount = count;
                for (int i = 0; i < releaseCount && _holdings.Count > 0; i++)
                {
                    int at = index >= 0 ? index : HoldingOf(current);
                    index = -1;
                    ended.Add(EndHolding(at));
                }

                count += releaseCount;
                while (count > 0 && _waiters is { Count: > 0 } waiters)
                {
                    LockWaiter next = TakeBestWaiter(waiters, ref batch);
                    count--;
                    next.HoldContext = AddHolding(next.Context, out long nextGeneration, out bool claimed);
                    next.Generation = nextGeneration;
                    next.Claimed = claimed;
                    granted.Add(next);
                }

                SetCount(count);
                LendToAll(ref batch); // the remaining waiters now wait on the new holders
            }
            finally
            {
                GiveBackBookkeeping();
            }
        }

        ended.LeaveRegions(current, ref batch);
        granted.EnterRegions(ref batch);
        batch.Run();
        granted.Complete();
        return previousCount;
    }

    /// <summary>The holding ended because the scheduler dropped its first item (a granted waiter's continuation, [X-LOCK]).</summary>
    internal void ReleaseDropped(LockWaiter waiter)
    {
        try
        {
            ReleaseCore(1, waiter.Generation);
        }
        catch (InvalidOperationException)
        {
            // Released already (its code never ran, so only a racing drop could have): nothing held.
        }
    }

    /// <summary>Under the lock: the holding of the region <paramref name="current"/> runs in, else the oldest.</summary>
    private int HoldingOf(FlowContext? current)
    {
        if (current is not null)
        {
            for (int i = 0; i < _holdings.Count; i++)
            {
                if (ReferenceEquals(_holdings[i].Region, current.Flow))
                {
                    return i;
                }
            }
        }

        return 0;
    }

    /// <summary>Under the lock: removes a holding; its region's flow is kept for the next holding at that level, and its field is free
    /// again if the holding had claimed it (before the permit is: [X-LOCK-FAST]).</summary>
    private Holding EndHolding(int index)
    {
        Holding ended = _holdings.RemoveAt(index);
        if (ended.Claimed)
        {
            ended.Region!.Unclaim();
        }

        return ended;
    }

    // ---- Waiters ------------------------------------------------------------------------------------------------------------

    /// <summary>A waiter's cancellation fired (any thread).</summary>
    internal void CancelWait(LockWaiter waiter, CancellationToken token)
    {
        if (Withdraw(waiter))
        {
            waiter.Complete(granted: false, new OperationCanceledException($"The wait for {Subject} was cancelled.", token));
        }
    }

    /// <summary>The waiter's scheduler ended while it waited.</summary>
    internal void AbandonWait(LockWaiter waiter, Exception error)
    {
        if (Withdraw(waiter))
        {
            waiter.Complete(granted: false, error);
        }
    }

    /// <summary>A waiter's timeout fired (any thread).</summary>
    internal void TimeOutWait(LockWaiter waiter)
    {
        if (Withdraw(waiter))
        {
            waiter.Complete(granted: false);
        }
    }

    /// <summary>Takes a waiter out of the queue, if it is still there (a grant may have come first), and ends the waits it lent.</summary>
    private bool Withdraw(LockWaiter waiter)
    {
        var batch = default(EscalationBatch);
        lock (_lock)
        {
            if (_waiters is null || !_waiters.Remove(waiter))
            {
                return false;
            }

            EndLending(waiter, ref batch);
            GiveBackBookkeeping(); // the last waiter gone and nothing held: the lock-free paths again
        }

        waiter.Context?.Scheduler.UntrackPending(waiter);
        batch.Run();
        return true;
    }

    /// <summary>Under the lock: the waiter of the highest level now, the earliest among equals; it is taken out of the queue.</summary>
    private static LockWaiter TakeBestWaiter(List<LockWaiter> waiters, ref EscalationBatch batch)
    {
        int best = 0;
        int bestRank = waiters[0].Rank;
        for (int i = 1; i < waiters.Count; i++)
        {
            int rank = waiters[i].Rank;
            if (rank > bestRank)
            {
                best = i;
                bestRank = rank; // list order is arrival order: the first of a rank is the earliest
            }
        }

        LockWaiter waiter = waiters[best];
        waiters.RemoveAt(best);
        EndLending(waiter, ref batch);
        return waiter;
    }

    /// <summary>Under the lock: points every waiter's waits at the current holders' regions on its scheduler.</summary>
    private void LendToAll(ref EscalationBatch batch)
    {
        if (_waiters is { Count: > 0 } waiters)
        {
            foreach (LockWaiter waiter in waiters)
            {
                LendTo(waiter, ref batch);
            }
        }
    }

    /// <summary>Under the lock: [X-LOCK]'s lending: one wait per holder's region on the waiter's scheduler; waits on regions no longer
    /// held are ended. A waiter off every scheduler, or whose holders run elsewhere, lends nothing (reported if it waits long).</summary>
    private void LendTo(LockWaiter waiter, ref EscalationBatch batch)
    {
        if (waiter.Context is not { } context)
        {
            return;
        }

        List<WaitEdge>? edges = waiter.Edges;
        if (edges is not null)
        {
            for (int i = edges.Count - 1; i >= 0; i--)
            {
                if (!IsHeldRegion(edges[i].To, context.Scheduler))
                {
                    EscalationGraph.Remove(edges[i], ref batch);
                    edges.RemoveAt(i);
                }
            }
        }

        foreach (Holding holding in _holdings)
        {
            if (holding.Region is { } region && ReferenceEquals(region.Scheduler, context.Scheduler) && !LendsTo(edges, region))
            {
                var edge = new WaitEdge(context.Node, context.Level, context.Scheduler, region, this);
                (edges ??= waiter.Edges = []).Add(edge);
                EscalationGraph.Add(edge, ref batch);
            }
        }
    }

    private bool IsHeldRegion(IEscalationNode? node, PriorityScheduler scheduler)
    {
        foreach (Holding holding in _holdings)
        {
            if (ReferenceEquals(holding.Region, node) && ReferenceEquals(holding.Region!.Scheduler, scheduler))
            {
                return true;
            }
        }

        return false;
    }

    private static bool LendsTo(List<WaitEdge>? edges, IEscalationNode node)
    {
        if (edges is not null)
        {
            foreach (WaitEdge edge in edges)
            {
                if (ReferenceEquals(edge.To, node))
                {
                    return true;
                }
            }
        }

        return false;
    }

    private static void EndLending(LockWaiter waiter, ref EscalationBatch batch)
    {
        if (waiter.Edges is { } edges)
        {
            foreach (WaitEdge edge in edges)
            {
                EscalationGraph.Remove(edge, ref batch);
            }

            edges.Clear();
        }
    }

    // ---- Regions: one flow per scheduler and level, reused by every holding there -------------------------------------

    private WorkFlow RegionFor(PriorityScheduler scheduler, int level)
    {
        if (ReferenceEquals(_regionScheduler, scheduler) && _regions![level] is { } known)
        {
            return known;
        }

        WorkFlow?[] regions;
        if (_regionScheduler is null || ReferenceEquals(_regionScheduler, scheduler))
        {
            if (_regions is null)
            {
                _regionScheduler = scheduler;
                Volatile.Write(ref _regions, new WorkFlow?[scheduler.Levels]); // after the scheduler: KnownRegion reads them in the other order
            }

            regions = _regions;
        }
        else
        {
            regions = OtherRegions(scheduler);
        }

        if (regions[level] is { } existing)
        {
            return existing;
        }

        var created = new WorkFlow(scheduler, level, $"{_kind}{(Name is null ? string.Empty : $" '{Name}'")} region", regionOf: this);
        Volatile.Write(ref regions[level], created); // read by KnownRegion without the lock
        return created;
    }

    private WorkFlow?[] OtherRegions(PriorityScheduler scheduler)
    {
        _otherRegions ??= [];
        foreach ((PriorityScheduler other, WorkFlow?[] regions) in _otherRegions)
        {
            if (ReferenceEquals(other, scheduler))
            {
                return regions;
            }
        }

        var created = new WorkFlow?[scheduler.Levels];
        _otherRegions.Add((scheduler, created));
        return created;
    }

    /// <summary>A waiter's report timer fired (its scheduler's stall timeout after it began to wait, [X-SEEN]): if it still waits, report
    /// it, with whether the holders could be raised.</summary>
    internal void ReportLongWait(LockWaiter waiter)
    {
        string holders;
        bool raised;
        lock (_lock)
        {
            if (_waiters is null || !_waiters.Contains(waiter))
            {
                return;
            }

            holders = DescribeHolders();
            raised = waiter.Edges is { Count: > 0 };
        }

        EscalationReport.LongLockWait(waiter, Subject, holders, raised);
    }

    private string DescribeHolders()
    {
        if (_holdings.Count == 0)
        {
            return "no holder (permits are released by other code)";
        }

        var parts = new List<string>(_holdings.Count);
        foreach (Holding holding in _holdings)
        {
            parts.Add(holding.Region is { } region ? $"code at level {region.OwnLevel} of {region.Scheduler.Subject}" : "code off every priority scheduler");
        }

        return string.Join(", ", parts);
    }

    /// <summary>One permit held: the region it runs in (null off every scheduler), the context its code ran in before (given back at the
    /// release), its number, and whether it named its holder in the region's field ([X-LOCK-FAST]; otherwise the holder is the region's
    /// parent in the graph, or there is none).</summary>
    private readonly record struct Holding(WorkFlow? Region, PrioritySynchronizationContext? Previous, long Generation, bool Claimed);

    /// <summary>The holdings now, oldest first: the first inline (a lock has one at most), the others in a list. Under the lock.</summary>
    private struct HoldingSet
    {
        private Holding _first;
        private List<Holding>? _more;

        public int Count { get; private set; }

        public readonly Holding First => _first;

        public readonly Holding this[int index] => index == 0 ? _first : _more![index - 1];

        public void Add(Holding holding)
        {
            if (Count == 0)
            {
                _first = holding;
            }
            else
            {
                (_more ??= []).Add(holding);
            }

            Count++;
        }

        /// <summary>The index of the holding numbered <paramref name="generation"/>, or -1.</summary>
        public readonly int IndexOf(long generation)
        {
            for (int i = 0; i < Count; i++)
            {
                if (this[i].Generation == generation)
                {
                    return i;
                }
            }

            return -1;
        }

        public Holding RemoveAt(int index)
        {
            Holding removed = this[index];
            if (index == 0)
            {
                _first = Count > 1 ? _more![0] : default;
                index = 1; // the one moved to the first slot leaves the list
            }

            if (Count > 1)
            {
                _more!.RemoveAt(index - 1);
            }

            Count--;
            return removed;
        }

        public readonly Enumerator GetEnumerator() => new(this);

        public struct Enumerator(HoldingSet set)
        {
            private int _index = -1;

            public readonly Holding Current => set[_index];

            public bool MoveNext() => ++_index < set.Count;
        }
    }

    /// <summary>The holdings a release ended: one inline (the usual case allocates nothing), more in a list.</summary>
    private struct Ended
    {
        private Holding _first;
        private bool _hasFirst;
        private List<Holding>? _more;

        public void Add(Holding holding)
        {
            if (!_hasFirst)
            {
                _first = holding;
                _hasFirst = true;
            }
            else
            {
                (_more ??= []).Add(holding);
            }
        }

        /// <summary>Outside the lock: each region's flow leaves the flow it was entered from, and code releasing from inside its region
        /// goes on where it was before, at the level it runs at now ([X-LOCK]).</summary>
        public readonly void LeaveRegions(FlowContext? current, ref EscalationBatch batch)
        {
            if (_hasFirst)
            {
                Leave(_first, current, ref batch);
            }

            if (_more is { } more)
            {
                foreach (Holding holding in more)
                {
                    Leave(holding, current, ref batch);
                }
            }
        }

        private static void Leave(Holding holding, FlowContext? current, ref EscalationBatch batch)
        {
            if (holding.Region is not { } region)
            {
                return;
            }

            if (holding.Claimed)
            {
                region.AfterUnclaim(); // its field was cleared under the lock
            }
            else if (holding.Previous!.Node is { } parent && !ReferenceEquals(parent, region))
            {
                EscalationGraph.Detach(region, parent, ref batch);
            }

            if (current is not null && ReferenceEquals(current.Flow, region))
            {
                GiveBackContext(holding.Previous!, current);
            }
        }

        /// <summary>Code releasing from inside the region goes on in the context it took the lock in, at the level it runs at now.</summary>
        public static void GiveBackContext(PrioritySynchronizationContext previous, FlowContext current) =>
            SynchronizationContext.SetSynchronizationContext(current.Level == previous.Level ? previous : previous.ContextAt(current.Level));
    }

    /// <summary>The waiters a release granted: one inline, more in a list.</summary>
    private struct Granted
    {
        private LockWaiter? _first;
        private List<LockWaiter>? _more;

        public void Add(LockWaiter waiter)
        {
            if (_first is null)
            {
                _first = waiter;
            }
            else
            {
                (_more ??= []).Add(waiter);
            }
        }

        public readonly void EnterRegions(ref EscalationBatch batch)
        {
            if (_first is not null)
            {
                Enter(_first, ref batch);
            }

            if (_more is { } more)
            {
                foreach (LockWaiter waiter in more)
                {
                    Enter(waiter, ref batch);
                }
            }
        }

        /// <summary>Outside every lock: resumes each granted waiter in its region (its scheduler no longer has to end its wait).</summary>
        public readonly void Complete()
        {
            if (_first is not null)
            {
                Resume(_first);
            }

            if (_more is { } more)
            {
                foreach (LockWaiter waiter in more)
                {
                    Resume(waiter);
                }
            }
        }

        private static void Resume(LockWaiter waiter)
        {
            waiter.Context?.Scheduler.UntrackPending(waiter);
            waiter.Complete(granted: true);
        }

        private static void Enter(LockWaiter waiter, ref EscalationBatch batch)
        {
            if (waiter.HoldContext is { } region)
            {
                EnterRegion(region.Flow, waiter.Context!.Node, waiter.Claimed, ref batch);
            }
        }
    }
}
