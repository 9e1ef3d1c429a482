using System.Collections.Generic;
using Microsoft.CodeAnalysis;

namespace PriorityAsync.Analyzers;

/// <summary>How a lambda reaches the code that runs it, which decides whether its body runs on the loop.</summary>
internal enum LambdaStart
{
    /// <summary>Runs where the code that creates it runs (LINQ, Task.WhenAll over a Select, a local delegate, Progress&lt;T&gt;).</summary>
    Inherit,

    /// <summary>Given to something that runs it on a loop: PriorityContext.Run or InvokeAsync, a context's task factory, scheduler,
    /// synchronization context or controller, Priority.Start, a scope's Start or StartAsync, TaskScope.RunAsync.</summary>
    Loop,

    /// <summary>Given to something that runs it on the thread pool or a thread of its own (Task.Run, Task.Factory.StartNew,
    /// ThreadPool, Parallel, new Thread): certainly off the loop.</summary>
    Pool,

    /// <summary>Given to something that may run it anywhere (ContinueWith, CancellationToken.Register, an event, a system timer):
    /// not checked, because a false positive is worse than a missed hit.</summary>
    Unknown,
}

/// <summary>What the analyzer learned about one function body (a member, a lambda or a local function) in one walk of its
/// operations; read once the walk of the whole member is done. Used by one analysis callback only (no sharing).</summary>
internal sealed class LoopFunction
{
    private List<(int Position, bool OnLoop)>? _transitions;
    private List<(ISymbol Symbol, int Position)>? _completed;
    private List<(LoopFunction From, int Position, LambdaStart Start)>? _references;
    private bool? _baseOnLoop;
    private bool _computing;

    public LoopFunction(LoopFunction? parent, IMethodSymbol? symbol, bool isLambda, LambdaStart start, int position, bool attributed)
    {
        Parent = parent;
        Symbol = symbol;
        IsLambda = isLambda;
        Start = start;
        Position = position;
        Attributed = attributed;
    }

    /// <summary>Gets the function that contains this one, or <see langword="null"/> for the member.</summary>
    public LoopFunction? Parent { get; }

    public IMethodSymbol? Symbol { get; }

    public bool IsLambda { get; }

    public LambdaStart Start { get; }

    /// <summary>Gets the position of the function in the source.</summary>
    public int Position { get; }

    /// <summary>Gets whether the user marked it [RunsOnPriorityLoop] (or it is a member that runs on a loop by construction).</summary>
    public bool Attributed { get; }

    /// <summary>Gets or sets the position of the first use of a member that only works on a loop (Priority.Yield, ...).</summary>
    public int FirstEvidence { get; set; } = int.MaxValue;

    /// <summary>Gets or sets the number of awaits directly in this function (PA0005).</summary>
    public int AwaitCount { get; set; }

    /// <summary>Gets or sets the last await seen directly in this function (PA0005).</summary>
    public Microsoft.CodeAnalysis.Operations.IAwaitOperation? LastAwait { get; set; }

    /// <summary>Records that the code after <paramref name="position"/> is on the loop (<c>await context.Prioritize(level)</c>) or may
    /// have left it (<c>await ... ConfigureAwait(false)</c>).</summary>
    public void AddTransition(int position, bool onLoop) => (_transitions ??= new()).Add((position, onLoop));

    /// <summary>Records a use of this local function in the member: a call (<paramref name="start"/> Inherit: it runs where the
    /// caller is at <paramref name="position"/>) or a method group handed to something that runs it (<c>PriorityContext.Run(MainAsync)</c>:
    /// Loop; <c>Task.Run(MainAsync)</c>: Pool).</summary>
    public void AddReference(LoopFunction from, int position, LambdaStart start) => (_references ??= new()).Add((from, position, start));

    /// <summary>Records that <paramref name="symbol"/> (a task) is known to be complete after <paramref name="position"/>: it was
    /// awaited, or its IsCompleted was tested.</summary>
    public void AddCompleted(ISymbol symbol, int position) => (_completed ??= new()).Add((symbol, position));

    /// <summary>Gets the last transition before <paramref name="position"/>: <see langword="true"/> (back on the loop),
    /// <see langword="false"/> (may be off it), or <see langword="null"/> (none).</summary>
    public bool? LastTransitionBefore(int position)
    {
        if (_transitions is null)
        {
            return null;
        }

        int best = -1;
        bool onLoop = false;
        foreach ((int at, bool on) in _transitions)
        {
            if (at <= position && at > best)
            {
                best = at;
                onLoop = on;
            }
        }

        return best < 0 ? null : onLoop;
    }

    /// <summary>Gets whether the code at <paramref name="position"/> (inside this function) runs on a loop.</summary>
    public bool OnLoopAt(int position, KnownSymbols symbols) => LastTransitionBefore(position) ?? BaseOnLoop(symbols);

    /// <summary>Gets whether the function starts on a loop.</summary>
    public bool BaseOnLoop(KnownSymbols symbols)
    {
        if (_baseOnLoop is { } known)
        {
            return known;
        }

        if (_computing)
        {
            return false; // local functions that call each other: a cycle says nothing (a miss, never a false report)
        }

        _computing = true;
        bool onLoop = Compute();
        _computing = false;
        _baseOnLoop = onLoop;
        return onLoop;

        bool Compute()
        {
            if (Attributed)
            {
                return true;
            }

            // A use of Priority's static members says the author runs this code on a loop (they throw elsewhere), unless it comes
            // after an await context.Prioritize(level), which is the way onto the loop from elsewhere.
            if (FirstEvidence != int.MaxValue && !(LastTransitionBefore(FirstEvidence) == true))
            {
                return true;
            }

            if (Parent is null)
            {
                return MemberOnLoop(Symbol, symbols);
            }

            if (!IsLambda)
            {
                // A local function runs where it is called, and only its own member can call it: on a loop when the function that
                // declares it is, or when every use of it is on a loop (a handler declared beside PriorityContext.Run and called, or
                // passed, inside its lambda: top-level statements are written so).
                return Parent.BaseOnLoop(symbols) || EveryUseOnLoop(symbols);
            }

            return Start switch
            {
                LambdaStart.Loop => true,
                LambdaStart.Inherit => Parent.OnLoopAt(Position, symbols),
                _ => false,
            };
        }
    }

    /// <summary>Gets whether this local function is used at least once, and every use from outside its own body runs it on a loop.</summary>
    private bool EveryUseOnLoop(KnownSymbols symbols)
    {
        bool any = false;
        foreach ((LoopFunction from, int position, LambdaStart start) in _references ?? [])
        {
            if (from.IsWithin(this))
            {
                continue; // a call from its own body (recursion) says nothing of where it runs
            }

            bool onLoop = start switch
            {
                LambdaStart.Loop => true,
                LambdaStart.Inherit => from.OnLoopAt(position, symbols),
                _ => false,
            };
            if (!onLoop)
            {
                return false;
            }

            any = true;
        }

        return any;
    }

    /// <summary>Gets whether this function is <paramref name="other"/> or nested in it.</summary>
    private bool IsWithin(LoopFunction other)
    {
        for (LoopFunction? function = this; function is not null; function = function.Parent)
        {
            if (ReferenceEquals(function, other))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Gets why the code at <paramref name="position"/> is known to be off the loop, or <see langword="null"/>.</summary>
    public string? OffLoopReason(int position)
    {
        bool? last = LastTransitionBefore(position);
        if (last == false)
        {
            return "after an await with ConfigureAwait(false)";
        }

        if (last == true || !IsLambda || Parent is null)
        {
            return null;
        }

        return Start switch
        {
            LambdaStart.Pool => "in a lambda that runs on the thread pool",
            LambdaStart.Inherit => Parent.OffLoopReason(Position),
            _ => null,
        };
    }

    /// <summary>Gets whether <paramref name="symbol"/> was awaited (or tested complete) before <paramref name="position"/>, in this
    /// function or one that contains it.</summary>
    public bool IsKnownComplete(ISymbol symbol, int position)
    {
        for (LoopFunction? function = this; function is not null; function = function.Parent)
        {
            if (function._completed is null)
            {
                continue;
            }

            foreach ((ISymbol completed, int at) in function._completed)
            {
                if (at <= position && SymbolEqualityComparer.Default.Equals(completed, symbol))
                {
                    return true;
                }
            }
        }

        return false;
    }

    /// <summary>A member runs on a loop when it, or a type that contains it, is marked [RunsOnPriorityLoop], or when it belongs to a
    /// PriorityBackgroundService or PriorityThreadPoolBackgroundService subclass (other than what the host calls from its own threads:
    /// constructors, StartAsync, StopAsync, Dispose). A pool worker runs on the pool's threads, which run Priority.* and own their
    /// timers as a loop does.</summary>
    private static bool MemberOnLoop(IMethodSymbol? method, KnownSymbols symbols)
    {
        if (method is null)
        {
            return false;
        }

        if (HasAttribute(method, symbols)
            || (method.AssociatedSymbol is { } property && HasAttribute(property, symbols)))
        {
            return true;
        }

        for (INamedTypeSymbol? type = method.ContainingType; type is not null; type = type.ContainingType)
        {
            if (HasAttribute(type, symbols))
            {
                return true;
            }
        }

        if (!(symbols.PriorityBackgroundService is { } loopWorker && KnownSymbols.InheritsFrom(method.ContainingType, loopWorker))
            && !(symbols.PriorityThreadPoolBackgroundService is { } poolWorker && KnownSymbols.InheritsFrom(method.ContainingType, poolWorker)))
        {
            return false;
        }

        switch (method.MethodKind)
        {
            case MethodKind.Constructor:
            case MethodKind.StaticConstructor:
            case MethodKind.Destructor:
                return false;
        }

        return method.Name is not ("StartAsync" or "StopAsync" or "Dispose" or "DisposeAsync");
    }

    /// <summary>Gets whether <paramref name="symbol"/> carries [RunsOnPriorityLoop].</summary>
    public static bool HasAttribute(ISymbol symbol, KnownSymbols symbols)
    {
        if (symbols.RunsOnPriorityLoopAttribute is null)
        {
            return false;
        }

        foreach (AttributeData attribute in symbol.GetAttributes())
        {
            if (SymbolEqualityComparer.Default.Equals(attribute.AttributeClass, symbols.RunsOnPriorityLoopAttribute))
            {
                return true;
            }
        }

        return false;
    }
}
