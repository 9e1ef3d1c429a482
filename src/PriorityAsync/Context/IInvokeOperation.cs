using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>A delegate queued by <see cref="PriorityScheduler.InvokeAsync(System.Func{System.Threading.Tasks.Task}, int)"/> or as a
/// scope's child.</summary>
internal interface IInvokeOperation
{
    /// <summary>The queued callback; recognisable by reference, so a dropped operation can fault its task instead of leaving it pending.</summary>
    static readonly SendOrPostCallback RunCallback = static state => ((IInvokeOperation)state!).Run();

    /// <summary>Runs the delegate on a thread of the scheduler.</summary>
    void Run();

    /// <summary>The operation will never run (the scheduler finished): fault its task ([D-DROP]).</summary>
    void Abandon();
}
