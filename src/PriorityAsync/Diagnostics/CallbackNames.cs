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

        return s_methods.GetOrAdd(callback.Method, static method => $"{method.DeclaringType?.Name ?? "?"}.{method.Name}");
    }

    /// <summary>For a runtime box type such as <c>AsyncStateMachineBox&lt;TResult, TStateMachine&gt;</c>: <c>Declaring.Method</c> of the async method.</summary>
    private static string? StateMachineName(Type boxType) => s_stateMachines.GetOrAdd(boxType, static type =>
    {
        foreach (Type argument in type.GetGenericArguments())
        {
            if (typeof(IAsyncStateMachine).IsAssignableFrom(argument))
            {
                // The compiler names the state machine "<Method>d__N", nested in the method's type.
                string name = argument.Name;
                int close = name.IndexOf('>', StringComparison.Ordinal);
                string method = name.StartsWith('<') && close > 1 ? name[1..close] : name;
                return $"{argument.DeclaringType?.Name ?? "?"}.{method}";
            }
        }

        return null;
    });
}
