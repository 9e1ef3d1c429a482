using System;

namespace PriorityAsync;

/// <summary>
/// Tells the PriorityAsync analyzers that the marked method, local function, lambda, property or type runs on a
/// <see cref="PriorityContext"/>'s loop where they cannot infer it, so that they check it for the mistakes that break a loop:
/// pool timers (<c>PA0001</c>), blocking waits (<c>PA0002</c>), tasks that nothing owns (<c>PA0003</c>).
/// </summary>
/// <remarks>
/// <para>The analyzers infer the loop on their own for code that uses an awaitable that only works on a loop (<see cref="Priority"/>'s
/// <c>Prioritize</c>, <c>Yield</c>, <c>Delay</c>, <c>Checkpoint</c>, <c>ShouldYield</c>), for the members of a
/// <c>PriorityBackgroundService</c> subclass, for lambdas given to <see cref="PriorityContext.Run(Func{System.Threading.Tasks.Task}, PriorityContextOptions?)"/>,
/// <see cref="PriorityScheduler.InvokeAsync(Func{System.Threading.Tasks.Task})"/>, a context's task factory, synchronization context
/// or controller, and for the code after <c>await context.Prioritize(level)</c>. Mark what they cannot see, typically a helper that
/// the loop calls but that touches no PriorityAsync member itself. On a type, it marks every member of the type. docs/analyzers.md
/// lists the rules.</para>
/// <para>The attribute only informs the analyzers: it changes nothing at run time, and a marked method called off the loop still
/// runs where it is called.</para>
/// </remarks>
[AttributeUsage(
    AttributeTargets.Method | AttributeTargets.Property | AttributeTargets.Class | AttributeTargets.Struct,
    AllowMultiple = false,
    Inherited = false)]
public sealed class RunsOnPriorityLoopAttribute : Attribute
{
}
