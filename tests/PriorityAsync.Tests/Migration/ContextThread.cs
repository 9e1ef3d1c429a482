namespace PriorityAsync.Tests.Migration;

/// <summary>A loop on its own thread (AsyncContextThread / PriorityContextThread), seen through the calls a user would write.</summary>
public abstract class ContextThread : IDisposable
{
    /// <summary>thread.Context.</summary>
    public abstract object Context { get; }

    /// <summary>thread.Factory (PriorityAsync: Context.GetTaskFactory(DefaultLevel)).</summary>
    public abstract TaskFactory Factory { get; }

    /// <summary>AsyncEx: Factory.Run(work). PriorityAsync: Context.GetTaskFactory(DefaultLevel).StartNew(work).</summary>
    public abstract Task<T> Run<T>(Func<T> work);

    /// <summary>AsyncEx: Factory.Run(work). PriorityAsync: Context.GetTaskFactory(DefaultLevel).StartNew(work).</summary>
    public abstract Task Run(Action work);

    /// <summary>AsyncEx: Factory.Run(async () => ...). PriorityAsync: Context.InvokeAsync(async () => ...).</summary>
    public abstract Task RunAsync(Func<Task> work);

    /// <summary>AsyncEx: JoinAsync(). PriorityAsync: Complete(), then Completion.</summary>
    public abstract Task JoinAsync();

    public abstract void Dispose();
}
