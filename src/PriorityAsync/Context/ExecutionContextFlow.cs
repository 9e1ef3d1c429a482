using System.Runtime.CompilerServices;
using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// How an item carries the <see cref="ExecutionContext"/> it must run in ([E-FLOW]): a plain callback the context captured where it
/// entered, everything else none (the default context). "Nothing set" is stored as <see langword="null"/>, so the common case costs a
/// reference compare at the post and one at the dispatch.
/// </summary>
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

    /// <summary>A captured context as an item carries it: <see langword="null"/> for the default one.</summary>
    public static ExecutionContext? Of(ExecutionContext? captured) => ReferenceEquals(captured, Default) ? null : captured;

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
