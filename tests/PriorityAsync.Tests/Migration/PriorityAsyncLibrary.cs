using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Migration;

/// <summary>PriorityAsync, called as docs/migrating-from-asynccontext.md tells an AsyncEx user to.</summary>
public sealed class PriorityAsyncLibrary : ContextLibrary
{
    public override string Name => "PriorityAsync";

    public override object? Current => PriorityContext.Current;

    public override void Run(Action entry) => PriorityContext.Run(entry);

    public override T Run<T>(Func<T> entry) => PriorityContext.Run(entry);

    public override void Run(Func<Task> entry) => PriorityContext.Run(entry);

    public override T Run<T>(Func<Task<T>> entry) => PriorityContext.Run(entry);

    public override SynchronizationContext SynchronizationContextOf(object context)
    {
        var priority = (PriorityContext)context;
        return priority.GetSynchronizationContext(priority.DefaultLevel);
    }

    public override TaskScheduler SchedulerOf(object context)
    {
        var priority = (PriorityContext)context;
        return priority.GetScheduler(priority.DefaultLevel);
    }

    public override ContextThread StartThread() => new Thread(new PriorityContextThread());

    private sealed class Thread(PriorityContextThread thread) : ContextThread
    {
        public override object Context => thread.Context;

        public override TaskFactory Factory => thread.Context.GetTaskFactory(thread.Context.DefaultLevel);

        public override Task<T> Run<T>(Func<T> work) => Factory.StartNew(work);

        public override Task Run(Action work) => Factory.StartNew(work);

        public override Task RunAsync(Func<Task> work) => thread.Context.InvokeAsync(work);

        public override Task JoinAsync()
        {
            thread.Complete();
            return thread.Completion;
        }

        public override void Dispose() => thread.DisposeOrFail(); // Dispose, bounded: it waits for the loop to finish
    }
}
