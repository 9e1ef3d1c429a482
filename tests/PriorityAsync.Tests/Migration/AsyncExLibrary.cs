using Nito.AsyncEx;

namespace PriorityAsync.Tests.Migration;

/// <summary>Nito.AsyncEx.Context 5.1.2, called as its users call it.</summary>
public sealed class AsyncExLibrary : ContextLibrary
{
    public override string Name => "AsyncEx";

    public override object? Current => AsyncContext.Current;

    public override void Run(Action entry) => AsyncContext.Run(entry);

    public override T Run<T>(Func<T> entry) => AsyncContext.Run(entry);

    public override void Run(Func<Task> entry) => AsyncContext.Run(entry);

    public override T Run<T>(Func<Task<T>> entry) => AsyncContext.Run(entry);

    public override SynchronizationContext SynchronizationContextOf(object context) => ((AsyncContext)context).SynchronizationContext;

    public override TaskScheduler SchedulerOf(object context) => ((AsyncContext)context).Scheduler;

    public override ContextThread StartThread() => new Thread(new AsyncContextThread());

    private sealed class Thread(AsyncContextThread thread) : ContextThread
    {
        public override object Context => thread.Context;

        public override TaskFactory Factory => thread.Factory;

        public override Task<T> Run<T>(Func<T> work) => thread.Factory.Run(work);

        public override Task Run(Action work) => thread.Factory.Run(work);

        public override Task RunAsync(Func<Task> work) => thread.Factory.Run(work);

        public override Task JoinAsync() => thread.JoinAsync();

        public override void Dispose() => thread.Dispose();
    }
}
