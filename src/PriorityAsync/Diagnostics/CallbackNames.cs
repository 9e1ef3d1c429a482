using System;
using System.Collections.Concurrent;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Internal;

/// <summary>
/// Names a queued callback for a trace: <c>Type.Method</c> of the code it will run. A continuation of an async method is named after
/// the async method (not <c>MoveNext</c> of a runtime box). Names are cached per method and per state-machine type, so a traced
/// item costs a dictionary lookup, not reflection.
/// </summary>
internal static class CallbackNames
{
    private static readonly ConcurrentDictionary<MethodInfo, string> s_methods = new();
    private static readonly ConcurrentDictionary<Type, string?> s_stateMachines = new();
    private static readonly ConcurrentDictionary<SendOrPostCallback, bool> s_runtimeCallbacks = new();

    public static string Describe(SendOrPostCallback callback, object? state)
    {
        // Ours, or the runtime's (an await that captured the SynchronizationContext posts a static CoreLib callback with the
        // continuation as its state): the code that runs is the Action's.
        if (state is Action action
            && (callback == PriorityScheduler.s_runAction || callback == PriorityScheduler.s_runContinuation || IsRuntimeCallback(callback)))
        {
            return Describe(action);
        }

        if (callback == FlowContext.RunNextCallback && state is FlowContext flow)
        {
            return flow.DescribeNext(); // a flow's place runs the flow's oldest item
        }

        if (callback == SendWaiter.RunCallback && state is SendWaiter { Callback: { } sent } waiter)
        {
            return Describe(sent, waiter.State);
        }

        if (state is Task && callback.Target is PriorityTaskScheduler)
        {
            return "Task";
        }

        if (state is INamedWork work)
        {
            return work.Describe(); // InvokeAsync, a controller's Run, a scope's child: the code it runs
        }

        if (state is TimerEntry entry && callback == TimerEntry.FireCallback)
        {
            return entry is LoopTimer timer ? Describe(timer.Callback) : "Priority.Delay";
        }

        return Describe((Delegate)callback);
    }

    /// <summary>Names work started with a delegate (InvokeAsync, a controller's Run, a scope's child): the async method whose task the
    /// delegate returned when there is one (a lambda that calls <c>KeepLeaseAsync(message)</c> is named <c>Worker.KeepLeaseAsync</c>),
    /// else the delegate's own method.</summary>
    public static string DescribeWork(Delegate work, Task? returned)
    {
        Type? taskType = returned?.GetType();
        if (taskType is not null && taskType.IsGenericType && StateMachineName(taskType) is { } asyncMethod)
        {
            return asyncMethod;
        }

        return Describe(work);
    }

    private static bool IsRuntimeCallback(SendOrPostCallback callback) =>
        s_runtimeCallbacks.GetOrAdd(callback, static c => c.Method.DeclaringType?.Assembly == typeof(object).Assembly);

    /// <summary>Names a delegate: <c>Type.Method</c>, or the async method a state machine box runs.</summary>
    public static string Describe(Delegate callback)
    {
        object? target = callback.Target;
        if (target is not null && target.GetType().IsGenericType && StateMachineName(target.GetType()) is { } asyncMethod)
        {
            return asyncMethod;
        }

        return s_methods.GetOrAdd(callback.Method, static method => $"{UserType(method.DeclaringType)?.Name ?? "?"}.{UserName(method.Name)}");
    }

    /// <summary>The type a user wrote: a lambda's closure class (<c>&lt;&gt;c</c>, <c>&lt;&gt;c__DisplayClass0_0</c>) and a state machine
    /// are nested in it.</summary>
    private static Type? UserType(Type? type)
    {
        while (type is not null && type.Name.StartsWith('<') && type.DeclaringType is not null)
        {
            type = type.DeclaringType;
        }

        return type;
    }

    /// <summary>The name a user wrote, from a compiler-generated one: a local function <c>&lt;Main&gt;g__Refresh|0_1</c> is
    /// <c>Refresh</c>, a lambda <c>&lt;Main&gt;b__0_1</c> is <c>Main.lambda</c>, top-level code <c>&lt;Main&gt;$</c> is <c>Main</c>, a
    /// state machine <c>&lt;RunAsync&gt;d__3</c> is <c>RunAsync</c>; any other name is kept.</summary>
    internal static string UserName(string name)
    {
        int local = name.IndexOf(">g__", StringComparison.Ordinal);
        if (local >= 0)
        {
            int start = local + 4;
            int end = name.IndexOf('|', start);
            return end > start ? name[start..end] : name[start..];
        }

        if (!name.StartsWith('<'))
        {
            return name;
        }

        string inner = name.TrimStart('<');
        int close = inner.IndexOf('>', StringComparison.Ordinal);
        string method = close > 0 ? inner[..close] : inner;
        return name.Contains(">b__", StringComparison.Ordinal) ? method + ".lambda" : method;
    }

    /// <summary>For a runtime box type such as <c>AsyncStateMachineBox&lt;TResult, TStateMachine&gt;</c>: <c>Declaring.Method</c> of the async method.</summary>
    private static string? StateMachineName(Type boxType) => s_stateMachines.GetOrAdd(boxType, static type =>
    {
        foreach (Type argument in type.GetGenericArguments())
        {
            if (typeof(IAsyncStateMachine).IsAssignableFrom(argument))
            {
                // The compiler names the state machine "<Method>d__N", nested in the method's type (a lambda's: in its closure class).
                return $"{UserType(argument.DeclaringType)?.Name ?? "?"}.{UserName(argument.Name)}";
            }
        }

        return null;
    });
}
