using System;
using System.Threading;

namespace PriorityAsync.Benchmarks.Threads;

/// <summary>
/// Something that runs callbacks on several threads (issue 20's harness): the priority scheduler on N threads, or a baseline without
/// priority (the thread pool through <c>Task.Run</c>, <see cref="System.Threading.Tasks.ConcurrentExclusiveSchedulerPair"/>'s
/// concurrent scheduler), or the single-threaded <see cref="PriorityContextThread"/> for reference.
/// </summary>
internal interface IWorkers : IDisposable
{
    /// <summary>The row's name in the tables.</summary>
    string Name { get; }

    /// <summary>How many callbacks can run at once (the threads that can take CPU work).</summary>
    int Threads { get; }

    /// <summary>Queues <paramref name="callback"/>; <paramref name="high"/> asks for the high level where there are levels.</summary>
    void Post(bool high, SendOrPostCallback callback, object? state);

    /// <summary>How many times a post had to wake a parked worker thread so far, or -1 where the workers do not count it.</summary>
    long WakeCount => -1;
}
