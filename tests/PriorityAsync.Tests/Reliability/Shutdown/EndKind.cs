namespace PriorityAsync.Tests.Reliability.Shutdown;

/// <summary>How a shutdown round ends its scheduler, at a random moment while the producers run.</summary>
public enum EndKind
{
    /// <summary><c>Complete()</c> from another thread (for <see cref="EntryKind.Run"/>: the entry returns); graceful.</summary>
    Complete,

    /// <summary><c>Dispose()</c> from the owner: the thread that created it (for a host, the host's thread between drains).</summary>
    DisposeFromOwner,

    /// <summary><c>Dispose()</c> from a thread that neither owns nor runs it.</summary>
    DisposeFromAnotherThread,

    /// <summary><c>Dispose()</c> from inside an item the scheduler runs.</summary>
    DisposeFromAnItem,

    /// <summary><c>await DisposeAsync()</c> from another thread.</summary>
    DisposeAsync,

    /// <summary>An item throws and no handler marks it handled: the scheduler faults.</summary>
    Fault,
}
