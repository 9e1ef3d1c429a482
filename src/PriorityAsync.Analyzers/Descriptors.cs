using System.Linq;
using System.Reflection;
using Microsoft.CodeAnalysis;

namespace PriorityAsync.Analyzers;

/// <summary>
/// The rules, one ID each. docs/analyzers.md has a section per rule: what breaks, what it costs, the fix; each rule's help link (the
/// IDE's link on the ID, and the URL a build prints after the message) is that section.
/// </summary>
internal static class Descriptors
{
    private const string Category = "PriorityAsync";

    // The repository's docs page (the URL comes from Directory.Build.props, through the assembly's metadata); declared before the
    // rules, whose initializers read it.
    private static readonly string s_analyzersPage = typeof(Descriptors).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == "PriorityAsync.RepositoryUrl").Value + "/blob/main/docs/analyzers.md";

    /// <summary>PA0001: a timer of the thread pool (or the system clock's) used by code on a loop.</summary>
    public static readonly DiagnosticDescriptor PoolTimer = new(
        id: "PA0001",
        title: "Use the loop's timers on a priority loop",
        messageFormat: "{0} runs on a thread-pool timer: a starved pool makes it late; {1}",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0001-pool-timers-on-the-loop"),
        description: "Task.Delay, Timer, PeriodicTimer, CancellationTokenSource(delay) and WaitAsync(timeout) without a TimeProvider are "
            + "fired by the thread pool. On a priority loop use Priority.Delay or the context's TimeProvider, whose timers the loop itself fires.");

    /// <summary>PA0002: a synchronous wait on a loop.</summary>
    public static readonly DiagnosticDescriptor BlockingWait = new(
        id: "PA0002",
        title: "Do not block a priority loop",
        messageFormat: "{0} blocks the loop thread: nothing else runs meanwhile, and work that needs the loop to finish deadlocks; await instead",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0002-blocking-waits-on-the-loop"),
        description: "Task.Wait, Task.WaitAll, Task.WaitAny, .Result, .GetAwaiter().GetResult() and Thread.Sleep stop the loop: every level "
            + "waits, and a task whose continuation needs the loop never completes.");

    /// <summary>PA0003: a task started on a loop that nothing awaits.</summary>
    public static readonly DiagnosticDescriptor UnownedTask = new(
        id: "PA0003",
        title: "Give a task started on a priority loop an owner",
        messageFormat: "The task of '{0}' is not awaited and has no owner: its exception is lost and it can outlive the loop; await it or start it as a child (Priority.Start or a TaskScope)",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0003-unowned-tasks-on-the-loop"),
        description: "A task that is discarded (_ = FooAsync()) or not awaited runs on the loop with no owner: nothing waits for it before "
            + "the loop ends, and its exception goes unobserved. A child of a scope is awaited by the scope, which surfaces its exception.");

    /// <summary>PA0004: a static Priority member (or a scope's Start) where the code has left the loop.</summary>
    public static readonly DiagnosticDescriptor StaticPriorityOffLoop = new(
        id: "PA0004",
        title: "Priority's static members need the loop: not after ConfigureAwait(false)",
        messageFormat: "{0} runs {1}, where the code may no longer be on the loop: it throws InvalidOperationException there; use context.Prioritize(level) to return to the loop first",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0004-static-priority-members-after-configureawaitfalse"),
        description: "After await ... ConfigureAwait(false) the rest of the method continues on the thread pool whenever the awaited task "
            + "completed asynchronously; Priority.Prioritize, Yield, Delay, Checkpoint, ShouldYield and Start, and TaskScope.RunAsync, "
            + "Start and StartAsync find no loop there and throw. await context.Prioritize(level) goes back to a known context.");

    /// <summary>PA0005: a helper whose only await is Prioritize, so the level it sets applies to nothing.</summary>
    public static readonly DiagnosticDescriptor PrioritizeInHelper = new(
        id: "PA0005",
        title: "A level set at the end of a helper does not reach its caller",
        messageFormat: "'{0}' only awaits Prioritize, as its last statement: the level applies to nothing, because the caller resumes at its own level; return the awaitable (PriorityAwaitable) instead",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0005-a-helper-that-only-awaits-prioritize"),
        description: "The level is carried by each async method's own continuations, not by its caller's: awaiting a helper that ends with "
            + "await Prioritize(level) leaves the caller where it was. A helper that returns Prioritize(level) itself moves the caller.");

    /// <summary>PA0006: a lock that knows nothing of levels, awaited on a priority scheduler (priority inversion). A suggestion: many
    /// such locks are never contended across levels.</summary>
    public static readonly DiagnosticDescriptor PriorityLock = new(
        id: "PA0006",
        title: "Consider the priority lock on a priority scheduler",
        messageFormat: "{0} knows nothing of levels: an urgent waiter waits for a less urgent holder, which waits behind everything in between; where levels share this lock, use {1}, which runs the holder at its most urgent waiter's level",
        category: Category,
        defaultSeverity: DiagnosticSeverity.Info,
        isEnabledByDefault: true,
        helpLinkUri: HelpLink("pa0006-a-lock-that-knows-nothing-of-levels"),
        description: "SemaphoreSlim.WaitAsync and Nito.AsyncEx's AsyncLock.LockAsync grant the lock without regard to levels, and the holder keeps "
            + "its own level: when code at a high level waits for a holder at a low one, every level in between runs first (priority "
            + "inversion). PriorityAsync.PriorityLock (using (await lockObj.LockAsync())) and PriorityAsync.PrioritySemaphore (await "
            + "sem.WaitAsync(); Release()) grant the most urgent waiter first and raise the holder to its level.");

    private static string HelpLink(string section) => s_analyzersPage + "#" + section;
}
