using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace PriorityAsync.Analyzers;

/// <summary>
/// One walk over the operations of one member body. It splits the body into functions (the member, its lambdas, its local
/// functions; <see cref="LoopFunction"/>), records in each what says where it runs and every candidate, then judges the candidates
/// with the whole body known. Used by one analysis callback only.
/// </summary>
internal sealed class MemberWalk
{
    /// <summary>The property of a PA0001 diagnostic that tells the code fix what to rewrite.</summary>
    public const string TimerKindProperty = "TimerKind";

    /// <summary>TimerKind values.</summary>
    public const string DelayAwaited = "DelayAwaited";
    public const string DelayValue = "DelayValue";
    public const string PeriodicTimer = "PeriodicTimer";
    public const string CancellationTokenSource = "CancellationTokenSource";
    public const string WaitAsync = "WaitAsync";
    public const string Timer = "Timer";

    private readonly KnownSymbols _symbols;
    private readonly IMethodSymbol _member;
    private readonly Action<Diagnostic> _report;
    private readonly List<Candidate> _candidates = new();
    private readonly List<LoopFunction> _functions = new();
    private Dictionary<ISymbol, ISymbol>? _iterationSources;
    private List<(IMethodSymbol Local, LoopFunction From, int Position, LambdaStart Start)>? _localUses;

    public MemberWalk(KnownSymbols symbols, IMethodSymbol member, Action<Diagnostic> report)
    {
        _symbols = symbols;
        _member = member;
        _report = report;
    }

    public void Run(ImmutableArray<IOperation> blocks)
    {
        var root = new LoopFunction(parent: null, _member, isLambda: false, LambdaStart.Inherit, position: 0, attributed: false);
        _functions.Add(root);

        // An explicit stack, not recursion: a long chain of binary operators must not overflow the compiler's stack.
        var stack = new Stack<(IOperation Operation, LoopFunction Function)>();
        foreach (IOperation block in blocks)
        {
            stack.Push((block, root));
        }

        while (stack.Count > 0)
        {
            (IOperation operation, LoopFunction function) = stack.Pop();
            LoopFunction inner = function;
            switch (operation)
            {
                case IAnonymousFunctionOperation lambda:
                    inner = new LoopFunction(function, lambda.Symbol, isLambda: true, ClassifyLambda(lambda), lambda.Syntax.SpanStart,
                        LoopFunction.HasAttribute(lambda.Symbol, _symbols));
                    _functions.Add(inner);
                    break;
                case ILocalFunctionOperation local:
                    inner = new LoopFunction(function, local.Symbol, isLambda: false, LambdaStart.Inherit, local.Syntax.SpanStart,
                        LoopFunction.HasAttribute(local.Symbol, _symbols));
                    _functions.Add(inner);
                    break;
                default:
                    Visit(operation, function);
                    break;
            }

            foreach (IOperation child in operation.ChildOperations)
            {
                stack.Push((child, inner));
            }
        }

        Judge();
    }

    private void Visit(IOperation operation, LoopFunction function)
    {
        switch (operation)
        {
            case IAwaitOperation awaitOperation:
                VisitAwait(awaitOperation, function);
                break;
            case IInvocationOperation invocation:
                if (invocation.TargetMethod.MethodKind == MethodKind.LocalFunction)
                {
                    AddLocalUse(invocation.TargetMethod, function, invocation.Syntax.SpanStart, LambdaStart.Inherit);
                }

                VisitInvocation(invocation, function);
                break;
            case IMethodReferenceOperation { Method.MethodKind: MethodKind.LocalFunction } reference:
                AddLocalUse(reference.Method, function, reference.Syntax.SpanStart, ClassifyLambda(reference));
                break;
            case IPropertyReferenceOperation property:
                VisitProperty(property, function);
                break;
            case IObjectCreationOperation creation:
                VisitCreation(creation, function);
                break;
            case IExpressionStatementOperation statement:
                VisitStatement(statement, function);
                break;
            case IForEachLoopOperation loop:
                VisitForEach(loop, function);
                break;
            case IUsingOperation { IsAsynchronous: true } usingOperation:
                function.AwaitCount++;
                if (IsConfigureAwaitFalse(StripOrNull(usingOperation.Resources)))
                {
                    function.AddTransition(usingOperation.Syntax.Span.End, onLoop: false);
                }

                break;
            case IUsingDeclarationOperation { IsAsynchronous: true }:
                function.AwaitCount++;
                break;
        }
    }

    private void VisitAwait(IAwaitOperation awaitOperation, LoopFunction function)
    {
        function.AwaitCount++;
        function.LastAwait = awaitOperation;
        int end = awaitOperation.Syntax.Span.End;
        IOperation awaited = Strip(awaitOperation.Operation);
        if (IsConfigureAwaitFalse(awaited))
        {
            function.AddTransition(end, onLoop: false);
        }
        else if (awaited is IInvocationOperation { TargetMethod: { IsStatic: false, Name: "Prioritize" or "Yield" } target }
            && IsScheduler(target.ContainingType))
        {
            // await context.Prioritize(level) (or a PriorityThreadPool's): the documented way onto the scheduler, from anywhere.
            function.AddTransition(end, onLoop: true);
        }

        // PA0006: await semaphore.WaitAsync(...) or await asyncLock.LockAsync(...), configured or not.
        IOperation acquired = Unconfigure(awaited) is { } unconfigured ? Strip(unconfigured) : awaited;
        if (acquired is IInvocationOperation { TargetMethod: { IsStatic: false } lockMethod } acquire)
        {
            INamedTypeSymbol? lockType = lockMethod.ContainingType?.OriginalDefinition;
            if (lockMethod.Name == "WaitAsync" && Is(lockType, _symbols.SemaphoreSlim))
            {
                Add(Descriptors.PriorityLock, acquire, function, "SemaphoreSlim.WaitAsync", "PriorityAsync.PrioritySemaphore (await sem.WaitAsync(); sem.Release())");
            }
            else if (lockMethod.Name == "LockAsync" && Is(lockType, _symbols.AsyncExAsyncLock))
            {
                Add(Descriptors.PriorityLock, acquire, function, "AsyncEx's AsyncLock.LockAsync", "PriorityAsync.PriorityLock (using (await lockObj.LockAsync()))");
            }
        }

        // Whatever the await waited for is complete after it: task.Result there does not block.
        foreach (IOperation inner in awaitOperation.Operation.DescendantsAndSelf())
        {
            if (RootSymbol(inner, follow: false) is { } symbol)
            {
                function.AddCompleted(symbol, end);
            }
        }
    }

    private void VisitInvocation(IInvocationOperation invocation, LoopFunction function)
    {
        IMethodSymbol method = invocation.TargetMethod;
        INamedTypeSymbol? type = method.ContainingType?.OriginalDefinition;
        int position = invocation.Syntax.SpanStart;

        if (Is(type, _symbols.Priority))
        {
            function.FirstEvidence = Math.Min(function.FirstEvidence, position);
            if (method.Name is "Prioritize" or "Yield" or "Delay" or "Checkpoint" or "Start")
            {
                Add(Descriptors.StaticPriorityOffLoop, invocation, function, "Priority." + method.Name);
            }

            return;
        }

        if (Is(type, _symbols.PriorityContext))
        {
            if (!method.IsStatic && method.Name == "Checkpoint")
            {
                function.FirstEvidence = Math.Min(function.FirstEvidence, position);
            }

            return;
        }

        if (Is(type, _symbols.TaskScope))
        {
            // TaskScope.RunAsync, scope.Start and scope.StartAsync throw anywhere but on the loop thread (Cancel and
            // CancellationToken work from any thread: no evidence).
            if (method.Name is "RunAsync" or "Start" or "StartAsync")
            {
                function.FirstEvidence = Math.Min(function.FirstEvidence, position);
                Add(Descriptors.StaticPriorityOffLoop, invocation, function, "TaskScope." + method.Name);
            }

            return;
        }

        if (Is(type, _symbols.Task) || Is(type, _symbols.TaskOfT))
        {
            switch (method.Name)
            {
                case "Delay" when method.IsStatic && !HasParameter(method, _symbols.TimeProvider) && !StartsNoTimer(invocation):
                    bool awaited = invocation.Parent is IAwaitOperation;
                    Add(Descriptors.PoolTimer, invocation, function, "Task.Delay",
                        awaited
                            ? "await Priority.Delay instead (the loop's own timer)"
                            : "pass the context's TimeProvider: Task.Delay(delay, context.TimeProvider, cancellationToken)",
                        properties: Kind(awaited ? DelayAwaited : DelayValue));
                    break;
                case "WaitAsync" when HasParameter(method, _symbols.TimeSpan) && !HasParameter(method, _symbols.TimeProvider)
                    && !IsInfinite(invocation.Arguments[0].Value):
                    Add(Descriptors.PoolTimer, invocation, function, "WaitAsync(timeout)",
                        "pass the context's TimeProvider: WaitAsync(timeout, context.TimeProvider)", properties: Kind(WaitAsync));
                    break;
                case "Wait" when !method.IsStatic && !(invocation.Arguments.Length > 0 && IsZero(invocation.Arguments[0].Value)):
                    Add(Descriptors.BlockingWait, invocation, function, "Task.Wait", receiver: RootSymbol(invocation.Instance, follow: true));
                    break;
                case "WaitAll" or "WaitAny" when method.IsStatic:
                    Add(Descriptors.BlockingWait, invocation, function, "Task." + method.Name);
                    break;
            }

            return;
        }

        if (method.Name == "GetResult" && invocation.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } getAwaiter
            && IsBlockingAwaitable(getAwaiter.Instance?.Type))
        {
            Add(Descriptors.BlockingWait, invocation, function, ".GetAwaiter().GetResult()",
                receiver: RootSymbol(Unconfigure(getAwaiter.Instance), follow: true));
            return;
        }

        if (Is(type, _symbols.Thread) && method.Name == "Sleep"
            && !(invocation.Arguments.Length == 1 && IsZero(invocation.Arguments[0].Value)))
        {
            Add(Descriptors.BlockingWait, invocation, function, "Thread.Sleep");
        }
    }

    private void VisitProperty(IPropertyReferenceOperation reference, LoopFunction function)
    {
        IPropertySymbol property = reference.Property;
        INamedTypeSymbol? type = property.ContainingType?.OriginalDefinition;
        if (Is(type, _symbols.Priority))
        {
            function.FirstEvidence = Math.Min(function.FirstEvidence, reference.Syntax.SpanStart);
            Add(Descriptors.StaticPriorityOffLoop, reference, function, "Priority." + property.Name);
            return;
        }

        if (Is(type, _symbols.PriorityContext) && property.IsStatic && property.Name == "CurrentLevel")
        {
            function.FirstEvidence = Math.Min(function.FirstEvidence, reference.Syntax.SpanStart);
            return;
        }

        if (!(Is(type, _symbols.Task) || Is(type, _symbols.TaskOfT) || Is(type, _symbols.ValueTask) || Is(type, _symbols.ValueTaskOfT)))
        {
            return;
        }

        switch (property.Name)
        {
            case "Result":
                Add(Descriptors.BlockingWait, reference, function, ".Result", receiver: RootSymbol(reference.Instance, follow: true));
                break;
            case "IsCompleted" or "IsCompletedSuccessfully" or "IsFaulted" or "IsCanceled":
                if (RootSymbol(reference.Instance, follow: false) is { } symbol)
                {
                    function.AddCompleted(symbol, reference.Syntax.SpanStart);
                }

                break;
        }
    }

    private void VisitCreation(IObjectCreationOperation creation, LoopFunction function)
    {
        INamedTypeSymbol? type = creation.Type?.OriginalDefinition as INamedTypeSymbol;
        IMethodSymbol? constructor = creation.Constructor;
        if (type is null || constructor is null)
        {
            return;
        }

        if (Is(type, _symbols.ThreadingTimer) || Is(type, _symbols.TimersTimer))
        {
            Add(Descriptors.PoolTimer, creation, function, "new " + type.ToDisplayString(),
                "create the timer with the context's TimeProvider.CreateTimer", properties: Kind(Timer));
        }
        else if (Is(type, _symbols.PeriodicTimer) && !HasParameter(constructor, _symbols.TimeProvider))
        {
            Add(Descriptors.PoolTimer, creation, function, "new PeriodicTimer",
                "pass the context's TimeProvider: new PeriodicTimer(period, context.TimeProvider)", properties: Kind(PeriodicTimer));
        }
        else if (Is(type, _symbols.CancellationTokenSource) && constructor.Parameters.Length > 0
            && !HasParameter(constructor, _symbols.TimeProvider)
            && (constructor.Parameters[0].Type.SpecialType == SpecialType.System_Int32 || Is(constructor.Parameters[0].Type, _symbols.TimeSpan))
            && !IsInfinite(creation.Arguments[0].Value))
        {
            Add(Descriptors.PoolTimer, creation, function, "new CancellationTokenSource(delay)",
                "pass the context's TimeProvider: new CancellationTokenSource(delay, context.TimeProvider)",
                properties: Kind(CancellationTokenSource));
        }
    }

    private void VisitStatement(IExpressionStatementOperation statement, LoopFunction function)
    {
        IOperation value = statement.Operation;
        if (value is ISimpleAssignmentOperation { Target: IDiscardOperation } discard)
        {
            value = discard.Value;
        }

        value = Strip(value);
        if (value is IConditionalAccessOperation conditional)
        {
            value = Strip(conditional.WhenNotNull);
        }

        if (value is not IInvocationOperation invocation || !_symbols.IsTaskLike(invocation.Type))
        {
            return;
        }

        IMethodSymbol method = invocation.TargetMethod;
        INamedTypeSymbol? type = method.ContainingType?.OriginalDefinition;

        // Owned already: a child of a scope, whose task StartAsync also hands back (the scope awaits the child and surfaces its
        // failure, whether or not the caller awaits that task), or InvokeAsync's task (the loop awaits it before Run returns).
        // Start itself returns nothing and never gets here.
        if ((method.Name is "StartAsync" && Is(type, _symbols.TaskScope))
            || (method.Name == "InvokeAsync" && IsScheduler(type)))
        {
            return;
        }

        Add(Descriptors.UnownedTask, statement, function, method.Name);
    }

    private void VisitForEach(IForEachLoopOperation loop, LoopFunction function)
    {
        if (loop.IsAsynchronous)
        {
            function.AwaitCount++;
            if (IsConfigureAwaitFalse(Strip(loop.Collection)))
            {
                function.AddTransition(loop.Collection.Syntax.Span.End, onLoop: false);
            }
        }

        // foreach (var task in tasks) task.Result: complete when tasks was awaited (await Task.WhenAll(tasks)).
        if (loop.LoopControlVariable is IVariableDeclaratorOperation { Symbol: { } variable }
            && RootSymbol(loop.Collection, follow: false) is { } source)
        {
            (_iterationSources ??= new(SymbolEqualityComparer.Default))[variable] = source;
        }
    }

    private void AddLocalUse(IMethodSymbol local, LoopFunction from, int position, LambdaStart start) =>
        (_localUses ??= new()).Add((local.OriginalDefinition, from, position, start));

    private void Judge()
    {
        // Where each local function is used, known now that the whole body has been walked (a use may come before the declaration).
        foreach ((IMethodSymbol local, LoopFunction from, int position, LambdaStart start) in _localUses ?? [])
        {
            foreach (LoopFunction function in _functions)
            {
                if (!function.IsLambda && function.Parent is not null && SymbolEqualityComparer.Default.Equals(function.Symbol, local))
                {
                    function.AddReference(from, position, start);
                }
            }
        }

        foreach (Candidate candidate in _candidates)
        {
            LoopFunction function = candidate.Function;
            if (candidate.Descriptor == Descriptors.StaticPriorityOffLoop)
            {
                if (function.OffLoopReason(candidate.Position) is { } reason)
                {
                    _report(Diagnostic.Create(candidate.Descriptor, candidate.Location, candidate.Argument, reason));
                }

                continue;
            }

            if (!function.OnLoopAt(candidate.Position, _symbols))
            {
                continue;
            }

            if (candidate.Receiver is { } receiver
                && (function.IsKnownComplete(receiver, candidate.Position)
                    || (_iterationSources is not null && _iterationSources.TryGetValue(receiver, out ISymbol? source)
                        && function.IsKnownComplete(source, candidate.Position))))
            {
                continue;
            }

            _report(Diagnostic.Create(candidate.Descriptor, candidate.Location, candidate.Properties, candidate.Argument, candidate.Hint));
        }

        foreach (LoopFunction function in _functions)
        {
            if (function.LastAwait is { } only && function.AwaitCount == 1 && IsUselessPrioritize(function, only))
            {
                _report(Diagnostic.Create(Descriptors.PrioritizeInHelper, only.Syntax.GetLocation(), function.Symbol!.Name));
            }
        }
    }

    /// <summary>PA0005: an async Task (or ValueTask) method or local function whose one await is Prioritize, as its last statement.</summary>
    private bool IsUselessPrioritize(LoopFunction function, IAwaitOperation only)
    {
        if (function.IsLambda || function.Symbol is not { IsAsync: true } method
            || !(Is(method.ReturnType, _symbols.Task) || Is(method.ReturnType, _symbols.ValueTask)))
        {
            return false;
        }

        if (Strip(only.Operation) is not IInvocationOperation { TargetMethod: { Name: "Prioritize" } target }
            || !(Is(target.ContainingType, _symbols.Priority) || IsScheduler(target.ContainingType)))
        {
            return false;
        }

        if (only.Parent is not IExpressionStatementOperation statement || statement.Parent is not IBlockOperation body
            || body.Parent is not (IMethodBodyOperation or ILocalFunctionOperation or null))
        {
            return false;
        }

        int index = body.Operations.IndexOf(statement);
        for (int i = index + 1; i < body.Operations.Length; i++)
        {
            if (body.Operations[i] is not IReturnOperation { ReturnedValue: null })
            {
                return false;
            }
        }

        // Only the caller on the loop resumes at its own level; a caller off the loop is not misled.
        return function.OnLoopAt(only.Syntax.SpanStart, _symbols);
    }

    /// <summary>Classifies a lambda, or a method group (of a local function), by what it is handed to.</summary>
    private LambdaStart ClassifyLambda(IOperation lambda)
    {
        IOperation? parent = lambda.Parent;
        if (parent is IDelegateCreationOperation)
        {
            parent = parent.Parent;
        }

        while (parent is IConversionOperation)
        {
            parent = parent.Parent;
        }

        return parent switch
        {
            IArgumentOperation { Parent: IInvocationOperation invocation } => ClassifyInvocation(invocation),
            IArgumentOperation { Parent: IObjectCreationOperation creation } =>
                Is(creation.Type, _symbols.Thread) || Is(creation.Type, _symbols.ThreadingTimer) ? LambdaStart.Pool : LambdaStart.Inherit,
            IEventAssignmentOperation => LambdaStart.Unknown,
            _ => LambdaStart.Inherit,
        };
    }

    private LambdaStart ClassifyInvocation(IInvocationOperation invocation)
    {
        IMethodSymbol method = invocation.TargetMethod;
        INamedTypeSymbol? type = method.ContainingType?.OriginalDefinition;

        if (IsScheduler(type))
        {
            // A PriorityThreadPool's InvokeAsync runs its lambda on the pool's threads: a scheduler whose rules the analyzers share
            // (its own timers, its Priority.* API), so it counts as "on a loop".
            return method.Name is "Run" or "InvokeAsync" ? LambdaStart.Loop : LambdaStart.Inherit;
        }

        if (Is(type, _symbols.PriorityTaskController))
        {
            return method.Name is "Run" or "Post" ? LambdaStart.Loop : LambdaStart.Inherit;
        }

        if (method.Name is "Post" or "Send" && KnownSymbols.InheritsFrom(invocation.Instance?.Type, _symbols.PrioritySynchronizationContext))
        {
            return LambdaStart.Loop;
        }

        if (Is(type, _symbols.Priority))
        {
            return LambdaStart.Loop; // Priority.Start: a child of the current loop's root scope
        }

        if (Is(type, _symbols.TaskScope))
        {
            // A child (Start, StartAsync) runs on the scope's loop; RunAsync's body starts at once on the calling thread, which must
            // be the loop's.
            return method.Name is "Start" or "StartAsync" or "RunAsync" ? LambdaStart.Loop : LambdaStart.Inherit;
        }

        if (Is(type, _symbols.TaskFactory) || Is(type, _symbols.TaskFactoryOfT))
        {
            if (IsPriorityFactory(invocation.Instance) || HasPriorityScheduler(invocation))
            {
                return LambdaStart.Loop;
            }

            return StripOrNull(invocation.Instance) is IPropertyReferenceOperation { Property.Name: "Factory", Property.IsStatic: true }
                ? LambdaStart.Pool
                : LambdaStart.Unknown;
        }

        if (Is(type, _symbols.Task) || Is(type, _symbols.TaskOfT))
        {
            return method.Name switch
            {
                "Run" => LambdaStart.Pool,
                "ContinueWith" => HasPriorityScheduler(invocation) ? LambdaStart.Loop : LambdaStart.Unknown,
                _ => LambdaStart.Inherit,
            };
        }

        if (Is(type, _symbols.ThreadPool) || Is(type, _symbols.Parallel))
        {
            return LambdaStart.Pool;
        }

        if (method.Name == "CreateTimer" && KnownSymbols.InheritsFrom(type, _symbols.TimeProvider))
        {
            return IsLoopTimeProvider(invocation.Instance) ? LambdaStart.Loop : LambdaStart.Unknown;
        }

        if (Is(type, _symbols.CancellationToken))
        {
            return LambdaStart.Unknown;
        }

        return LambdaStart.Inherit;
    }

    private bool IsPriorityFactory(IOperation? instance) => StripOrNull(instance) switch
    {
        IInvocationOperation { TargetMethod.Name: "GetTaskFactory" } invocation => IsScheduler(invocation.TargetMethod.ContainingType),
        IPropertyReferenceOperation { Property.Name: "Factory" } property => Is(property.Property.ContainingType, _symbols.PriorityTaskController),
        _ => false,
    };

    private bool HasPriorityScheduler(IInvocationOperation invocation)
    {
        foreach (IArgumentOperation argument in invocation.Arguments)
        {
            IOperation value = Strip(argument.Value);
            if (KnownSymbols.InheritsFrom(value.Type, _symbols.PriorityTaskScheduler)
                || (value is IPropertyReferenceOperation { Property.Name: "Scheduler" } property
                    && Is(property.Property.ContainingType, _symbols.PriorityTaskController))
                || (value is IInvocationOperation { TargetMethod.Name: "FromCurrentSynchronizationContext" }))
            {
                return true;
            }
        }

        return false;
    }

    private bool IsLoopTimeProvider(IOperation? instance) => StripOrNull(instance) switch
    {
        IPropertyReferenceOperation { Property.Name: "TimeProvider" } property => IsScheduler(property.Property.ContainingType),
        IInvocationOperation { TargetMethod.Name: "GetTimeProvider" } invocation => IsScheduler(invocation.TargetMethod.ContainingType),
        _ => false,
    };

    private bool IsBlockingAwaitable(ITypeSymbol? type)
    {
        if (type is null)
        {
            return false;
        }

        if (_symbols.IsTaskLike(type))
        {
            return true;
        }

        // task.ConfigureAwait(false).GetAwaiter().GetResult() blocks as well.
        string name = type.OriginalDefinition.MetadataName;
        return type.ContainingNamespace?.ToDisplayString() == "System.Runtime.CompilerServices"
            && name is "ConfiguredTaskAwaitable" or "ConfiguredTaskAwaitable`1" or "ConfiguredValueTaskAwaitable" or "ConfiguredValueTaskAwaitable`1";
    }

    private bool IsConfigureAwaitFalse(IOperation? operation)
    {
        // The last argument: ConfigureAwait on an IAsyncEnumerable or IAsyncDisposable is an extension method, whose receiver is the first.
        if (operation is not IInvocationOperation { TargetMethod.Name: "ConfigureAwait", Arguments.Length: 1 or 2 } invocation)
        {
            return false;
        }

        IOperation argument = invocation.Arguments[invocation.Arguments.Length - 1].Value;
        Optional<object?> constant = argument.ConstantValue;
        return constant.HasValue && constant.Value switch
        {
            bool continueOnCapturedContext => !continueOnCapturedContext,
            // ConfigureAwaitOptions without ContinueOnCapturedContext (1).
            int options => Is(argument.Type, _symbols.ConfigureAwaitOptions) && (options & 1) == 0,
            _ => false,
        };
    }

    /// <summary>Gets whether a delay argument starts no timer: zero completes at once, infinite never fires.</summary>
    private static bool StartsNoTimer(IInvocationOperation delay)
    {
        IOperation first = delay.Arguments[0].Value;
        return IsZero(first) || IsInfinite(first);
    }

    private static bool IsZero(IOperation value) =>
        ConstantIs(value, 0)
        || Strip(value) is IFieldReferenceOperation { Field: { Name: "Zero", ContainingType.Name: "TimeSpan" } };

    private static bool IsInfinite(IOperation value) =>
        ConstantIs(value, -1)
        || Strip(value) is IFieldReferenceOperation { Field: { Name: "InfiniteTimeSpan", ContainingType.Name: "Timeout" } };

    private static bool ConstantIs(IOperation value, long expected) => value.ConstantValue is { HasValue: true } constant
        && constant.Value switch
        {
            int number => number == expected,
            long number => number == expected,
            uint number => number == expected,
            _ => false,
        };

    /// <summary>The variable, parameter, field or property whose task an expression reads (<c>tasks[0]</c> reads <c>tasks</c>).</summary>
    private static ISymbol? RootSymbol(IOperation? operation, bool follow)
    {
        operation = StripOrNull(operation);
        ISymbol? symbol = operation switch
        {
            ILocalReferenceOperation local => local.Local,
            IParameterReferenceOperation parameter => parameter.Parameter,
            IFieldReferenceOperation field => field.Field,
            IPropertyReferenceOperation { Arguments.Length: 0 } property => property.Property,
            IPropertyReferenceOperation property => follow ? RootSymbol(property.Instance, follow) : null,
            IArrayElementReferenceOperation element => follow ? RootSymbol(element.ArrayReference, follow) : null,
            _ => null,
        };
        return symbol;
    }

    private static IOperation? Unconfigure(IOperation? operation) =>
        StripOrNull(operation) is IInvocationOperation { TargetMethod.Name: "ConfigureAwait" } configure ? configure.Instance : operation;

    private static IOperation Strip(IOperation operation)
    {
        while (operation is IConversionOperation conversion)
        {
            operation = conversion.Operand;
        }

        return operation;
    }

    private static IOperation? StripOrNull(IOperation? operation) => operation is null ? null : Strip(operation);

    private static bool HasParameter(IMethodSymbol method, INamedTypeSymbol? type)
    {
        foreach (IParameterSymbol parameter in method.Parameters)
        {
            if (Is(parameter.Type, type))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A PriorityContext, a PriorityThreadPool or their base, where the members they share are declared: both run Priority.*,
    /// both own their timers.</summary>
    private bool IsScheduler(ITypeSymbol? type) =>
        Is(type, _symbols.PriorityContext) || Is(type, _symbols.PriorityThreadPool) || Is(type, _symbols.PriorityScheduler);

    private static bool Is(ITypeSymbol? type, INamedTypeSymbol? expected) =>
        type is not null && expected is not null && SymbolEqualityComparer.Default.Equals(type.OriginalDefinition, expected);

    private static ImmutableDictionary<string, string?> Kind(string kind) =>
        ImmutableDictionary<string, string?>.Empty.Add(TimerKindProperty, kind);

    private void Add(
        DiagnosticDescriptor descriptor,
        IOperation operation,
        LoopFunction function,
        string argument,
        string? hint = null,
        ImmutableDictionary<string, string?>? properties = null,
        ISymbol? receiver = null)
    {
        _candidates.Add(new Candidate(descriptor, operation.Syntax.GetLocation(), operation.Syntax.SpanStart, function, argument, hint,
            properties, receiver));
    }

    private sealed class Candidate
    {
        public Candidate(DiagnosticDescriptor descriptor, Location location, int position, LoopFunction function, string argument,
            string? hint, ImmutableDictionary<string, string?>? properties, ISymbol? receiver)
        {
            Descriptor = descriptor;
            Location = location;
            Position = position;
            Function = function;
            Argument = argument;
            Hint = hint;
            Properties = properties;
            Receiver = receiver;
        }

        public DiagnosticDescriptor Descriptor { get; }
        public Location Location { get; }
        public int Position { get; }
        public LoopFunction Function { get; }
        public string Argument { get; }
        public string? Hint { get; }
        public ImmutableDictionary<string, string?>? Properties { get; }
        public ISymbol? Receiver { get; }
    }
}
