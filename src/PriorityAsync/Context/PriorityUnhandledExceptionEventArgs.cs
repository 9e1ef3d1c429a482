using System;

namespace PriorityAsync;

/// <summary>Describes an exception that escaped a callback running on a priority scheduler (typically an <c>async void</c> method).</summary>
public sealed class PriorityUnhandledExceptionEventArgs : EventArgs
{
    internal PriorityUnhandledExceptionEventArgs(Exception exception, int level)
    {
        Exception = exception;
        Level = level;
    }

    /// <summary>Gets the exception that escaped the callback.</summary>
    public Exception Exception { get; }

    /// <summary>Gets the level the callback was running at.</summary>
    public int Level { get; }

    /// <summary>
    /// Gets or sets whether a handler dealt with the exception. When a handler sets it to <see langword="true"/>, the scheduler goes
    /// on with the next item; otherwise it faults: it starts no more items, <see cref="PriorityContext.Run(Func{System.Threading.Tasks.Task}, PriorityContextOptions?)"/>
    /// rethrows the exception, and <see cref="PriorityScheduler.Completion"/> faults with it.
    /// </summary>
    public bool Handled { get; set; }
}
