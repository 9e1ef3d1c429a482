using System.Runtime.CompilerServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// How a loop item carries the <see cref="ExecutionContext"/> it must run in (the rule E1 at the top of Context/PriorityContext.cs).
/// </summary>
/// <remarks>
/// <para>A plain callback (a <c>Post</c>, a cross-thread <c>Send</c>, <c>InvokeAsync</c>, the entry of <c>Run</c>, a controller's post)
/// carries the context captured where it entered the loop; everything else (the continuation of an async method, whose state machine
/// restores its own context; a task, which runs in its own; a timer firing, which runs in the timer's) carries none and runs in the
/// default context, as on a thread-pool thread. <see cref="ExecutionContext.Capture"/> returns one shared object when nothing is set:
/// that is stored as <see langword="null"/>, so the common case stores nothing and costs a reference compare.</para>
/// <para>Before each item the loop thread enters the item's context (<see cref="Enter"/>): a reference compare when the thread is
/// already in it, a switch otherwise. So nothing an item leaves on the thread (an <c>AsyncLocal</c> value set in a plain callback, an
/// <c>Activity</c> left open) is seen by the next one, and the loop gives its thread back to the owner of <c>Run</c> in the context it
/// was in.</para>
/// </remarks>
internal static class ExecutionContextFlow
{
    /// <summary>The runtime's default context (the one a thread-pool thread returns to after every work item). It is not public: read
    /// once on a new thread started without flow, where <see cref="ExecutionContext.Capture"/> returns it.</summary>
    public static readonly ExecutionContext Default = ReadDefault();

    /// <summary>The calling code's context for an item to carry: <see langword="null"/> when nothing is set (the default context) or
    /// when flow is suppressed (the item then runs in the default context, as <c>UnsafeQueueUserWorkItem</c> would).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ExecutionContext? Capture()
    {
        ExecutionContext? captured = ExecutionContext.Capture();
        return ReferenceEquals(captured, Default) ? null : captured;
    }

    /// <summary>Makes <paramref name="executionContext"/> (the default context when <see langword="null"/>) the calling thread's
    /// context: a compare when it already is.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Enter(ExecutionContext? executionContext) => ExecutionContext.Restore(executionContext ?? Default);

    private static ExecutionContext ReadDefault()
    {
        ExecutionContext? captured = null;
        var thread = new Thread(() => captured = ExecutionContext.Capture()) { IsBackground = true, Name = "PriorityAsync default context" };
        thread.UnsafeStart(); // unsafe: the new thread does not capture this one's context
        thread.Join();
        return captured!;
    }
}
