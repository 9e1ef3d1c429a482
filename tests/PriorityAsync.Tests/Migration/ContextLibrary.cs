namespace PriorityAsync.Tests.Migration;

/// <summary>
/// What the migration tests need from a single-threaded async context library, so that one test body runs on Nito.AsyncEx's
/// <c>AsyncContext</c> and on <see cref="PriorityContext"/> alike. Each member is the call a user of that library would write.
/// </summary>
public abstract class ContextLibrary
{
    public static readonly ContextLibrary AsyncEx = new AsyncExLibrary();

    public static readonly ContextLibrary PriorityAsync = new PriorityAsyncLibrary();

    public abstract string Name { get; }

    /// <summary>AsyncContext.Current / PriorityContext.Current.</summary>
    public abstract object? Current { get; }

    public abstract void Run(Action entry);

    public abstract T Run<T>(Func<T> entry);

    public abstract void Run(Func<Task> entry);

    public abstract T Run<T>(Func<Task<T>> entry);

    /// <summary>The context's SynchronizationContext (PriorityAsync: the one of its default level).</summary>
    public abstract SynchronizationContext SynchronizationContextOf(object context);

    /// <summary>The context's TaskScheduler (PriorityAsync: the one of its default level).</summary>
    public abstract TaskScheduler SchedulerOf(object context);

    /// <summary>new AsyncContextThread() / new PriorityContextThread().</summary>
    public abstract ContextThread StartThread();

    public override string ToString() => Name;
}
