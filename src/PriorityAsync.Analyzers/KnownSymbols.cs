using Microsoft.CodeAnalysis;

namespace PriorityAsync.Analyzers;

/// <summary>The types the rules look for, resolved once per compilation. Immutable after <see cref="TryCreate"/>, so shared by every
/// analysis thread.</summary>
internal sealed class KnownSymbols
{
    private KnownSymbols(Compilation compilation, INamedTypeSymbol priority, INamedTypeSymbol priorityContext)
    {
        Priority = priority;
        PriorityContext = priorityContext;
        PriorityThreadPool = compilation.GetTypeByMetadataName("PriorityAsync.PriorityThreadPool");
        PriorityScheduler = compilation.GetTypeByMetadataName("PriorityAsync.PriorityScheduler");
        PrioritySynchronizationContext = compilation.GetTypeByMetadataName("PriorityAsync.PrioritySynchronizationContext");
        PriorityTaskScheduler = compilation.GetTypeByMetadataName("PriorityAsync.PriorityTaskScheduler");
        PriorityTaskController = compilation.GetTypeByMetadataName("PriorityAsync.PriorityTaskController");
        RunsOnPriorityLoopAttribute = compilation.GetTypeByMetadataName("PriorityAsync.RunsOnPriorityLoopAttribute");
        TaskScope = compilation.GetTypeByMetadataName("PriorityAsync.TaskScope");
        PriorityBackgroundService = compilation.GetTypeByMetadataName("PriorityAsync.Hosting.PriorityBackgroundService");
        PriorityThreadPoolBackgroundService = compilation.GetTypeByMetadataName("PriorityAsync.Hosting.PriorityThreadPoolBackgroundService");

        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task`1");
        ValueTask = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask");
        ValueTaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask`1");
        TaskFactory = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskFactory");
        TaskFactoryOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskFactory`1");
        Parallel = compilation.GetTypeByMetadataName("System.Threading.Tasks.Parallel");
        Thread = compilation.GetTypeByMetadataName("System.Threading.Thread");
        ThreadPool = compilation.GetTypeByMetadataName("System.Threading.ThreadPool");
        ThreadingTimer = compilation.GetTypeByMetadataName("System.Threading.Timer");
        TimersTimer = compilation.GetTypeByMetadataName("System.Timers.Timer");
        PeriodicTimer = compilation.GetTypeByMetadataName("System.Threading.PeriodicTimer");
        CancellationTokenSource = compilation.GetTypeByMetadataName("System.Threading.CancellationTokenSource");
        CancellationToken = compilation.GetTypeByMetadataName("System.Threading.CancellationToken");
        TimeProvider = compilation.GetTypeByMetadataName("System.TimeProvider");
        TimeSpan = compilation.GetTypeByMetadataName("System.TimeSpan");
        TaskAwaiter = compilation.GetTypeByMetadataName("System.Runtime.CompilerServices.TaskAwaiter");
        TaskAwaiterOfT = compilation.GetTypeByMetadataName("System.Runtime.CompilerServices.TaskAwaiter`1");
        ValueTaskAwaiter = compilation.GetTypeByMetadataName("System.Runtime.CompilerServices.ValueTaskAwaiter");
        ValueTaskAwaiterOfT = compilation.GetTypeByMetadataName("System.Runtime.CompilerServices.ValueTaskAwaiter`1");
        ConfigureAwaitOptions = compilation.GetTypeByMetadataName("System.Threading.Tasks.ConfigureAwaitOptions");
        SemaphoreSlim = compilation.GetTypeByMetadataName("System.Threading.SemaphoreSlim");
        AsyncExAsyncLock = compilation.GetTypeByMetadataName("Nito.AsyncEx.AsyncLock"); // Nito.AsyncEx.Coordination, by name: no reference needed
    }

    public INamedTypeSymbol Priority { get; }
    public INamedTypeSymbol PriorityContext { get; }
    public INamedTypeSymbol? PriorityThreadPool { get; }

    /// <summary>The base of both schedulers, where their shared members (Prioritize, InvokeAsync, TimeProvider...) are declared.</summary>
    public INamedTypeSymbol? PriorityScheduler { get; }
    public INamedTypeSymbol? PrioritySynchronizationContext { get; }
    public INamedTypeSymbol? PriorityTaskScheduler { get; }
    public INamedTypeSymbol? PriorityTaskController { get; }
    public INamedTypeSymbol? RunsOnPriorityLoopAttribute { get; }
    public INamedTypeSymbol? TaskScope { get; }
    public INamedTypeSymbol? PriorityBackgroundService { get; }
    public INamedTypeSymbol? PriorityThreadPoolBackgroundService { get; }
    public INamedTypeSymbol? Task { get; }
    public INamedTypeSymbol? TaskOfT { get; }
    public INamedTypeSymbol? ValueTask { get; }
    public INamedTypeSymbol? ValueTaskOfT { get; }
    public INamedTypeSymbol? TaskFactory { get; }
    public INamedTypeSymbol? TaskFactoryOfT { get; }
    public INamedTypeSymbol? Parallel { get; }
    public INamedTypeSymbol? Thread { get; }
    public INamedTypeSymbol? ThreadPool { get; }
    public INamedTypeSymbol? ThreadingTimer { get; }
    public INamedTypeSymbol? TimersTimer { get; }
    public INamedTypeSymbol? PeriodicTimer { get; }
    public INamedTypeSymbol? CancellationTokenSource { get; }
    public INamedTypeSymbol? CancellationToken { get; }
    public INamedTypeSymbol? TimeProvider { get; }
    public INamedTypeSymbol? TimeSpan { get; }
    public INamedTypeSymbol? TaskAwaiter { get; }
    public INamedTypeSymbol? TaskAwaiterOfT { get; }
    public INamedTypeSymbol? ValueTaskAwaiter { get; }
    public INamedTypeSymbol? ValueTaskAwaiterOfT { get; }
    public INamedTypeSymbol? ConfigureAwaitOptions { get; }
    public INamedTypeSymbol? SemaphoreSlim { get; }
    public INamedTypeSymbol? AsyncExAsyncLock { get; }

    /// <summary>Resolves the symbols, or returns <see langword="null"/> when the compilation does not reference PriorityAsync: then
    /// no code of it can run on a loop, and the analyzer registers nothing (it costs such a build nothing).</summary>
    public static KnownSymbols? TryCreate(Compilation compilation)
    {
        INamedTypeSymbol? priority = compilation.GetTypeByMetadataName("PriorityAsync.Priority");
        INamedTypeSymbol? context = compilation.GetTypeByMetadataName("PriorityAsync.PriorityContext");
        return priority is null || context is null ? null : new KnownSymbols(compilation, priority, context);
    }

    /// <summary>Gets whether <paramref name="type"/> is Task, Task&lt;T&gt;, ValueTask or ValueTask&lt;T&gt;.</summary>
    public bool IsTaskLike(ITypeSymbol? type)
    {
        if (type is not INamedTypeSymbol named)
        {
            return false;
        }

        INamedTypeSymbol original = named.OriginalDefinition;
        return SymbolEqualityComparer.Default.Equals(original, Task)
            || SymbolEqualityComparer.Default.Equals(original, TaskOfT)
            || SymbolEqualityComparer.Default.Equals(original, ValueTask)
            || SymbolEqualityComparer.Default.Equals(original, ValueTaskOfT)
            || (Task is not null && InheritsFrom(named, Task));
    }

    /// <summary>Gets whether <paramref name="type"/> is <paramref name="baseType"/> or derives from it.</summary>
    public static bool InheritsFrom(ITypeSymbol? type, INamedTypeSymbol? baseType)
    {
        if (baseType is null)
        {
            return false;
        }

        for (ITypeSymbol? current = type; current is not null; current = current.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(current.OriginalDefinition, baseType))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Gets whether <paramref name="type"/>'s definition is one of <paramref name="a"/> and <paramref name="b"/>.</summary>
    public static bool IsEither(ITypeSymbol? type, INamedTypeSymbol? a, INamedTypeSymbol? b)
    {
        ITypeSymbol? original = type?.OriginalDefinition;
        return original is not null
            && (SymbolEqualityComparer.Default.Equals(original, a) || SymbolEqualityComparer.Default.Equals(original, b));
    }
}
