using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;
using Microsoft.CodeAnalysis.Simplification;

namespace PriorityAsync.Analyzers;

/// <summary>Names the priority scheduler (a loop's context or a pool) that runs the code at a position, for fixes that need its
/// TimeProvider.</summary>
internal static class LoopContextExpression
{
    /// <summary>
    /// The scheduler in scope, best first: the worker's <c>Context</c> in an instance member of a PriorityBackgroundService subclass,
    /// its <c>Pool</c> in one of a PriorityThreadPoolBackgroundService subclass; the scheduler a lambda around
    /// <paramref name="position"/> is handed to, when it is named (<c>pool.InvokeAsync(...)</c>, <c>context.GetTaskFactory(1).StartNew(...)</c>,
    /// <c>pool.GetSynchronizationContext(0).Post(...)</c>); a variable or parameter of a scheduler type (PriorityContext,
    /// PriorityThreadPool, PriorityScheduler) declared before <paramref name="position"/>; else <c>Priority.CurrentScheduler!</c> (the
    /// code runs on a loop or a pool, so it is not null there: <c>PriorityContext.Current</c> would be, on a pool).
    /// </summary>
    public static ExpressionSyntax Create(SemanticModel model, int position)
    {
        INamedTypeSymbol? schedulerType = model.Compilation.GetTypeByMetadataName("PriorityAsync.PriorityScheduler")
            ?? model.Compilation.GetTypeByMetadataName("PriorityAsync.PriorityContext");
        INamedTypeSymbol? workerType = model.Compilation.GetTypeByMetadataName("PriorityAsync.Hosting.PriorityBackgroundService");
        INamedTypeSymbol? poolWorkerType = model.Compilation.GetTypeByMetadataName("PriorityAsync.Hosting.PriorityThreadPoolBackgroundService");

        ISymbol? enclosing = model.GetEnclosingSymbol(position);
        IMethodSymbol? member = enclosing as IMethodSymbol;
        while (member is { MethodKind: MethodKind.AnonymousFunction or MethodKind.LocalFunction })
        {
            member = member.ContainingSymbol as IMethodSymbol;
        }

        if (member is { IsStatic: false } && workerType is not null && InheritsFrom(member.ContainingType, workerType))
        {
            return SyntaxFactory.IdentifierName("Context");
        }

        if (member is { IsStatic: false } && poolWorkerType is not null && InheritsFrom(member.ContainingType, poolWorkerType))
        {
            return SyntaxFactory.IdentifierName("Pool");
        }

        if (schedulerType is not null && SchedulerRunningTheLambdaAround(model, position, schedulerType) is { } named)
        {
            return named;
        }

        if (schedulerType is not null)
        {
            foreach (ISymbol symbol in model.LookupSymbols(position))
            {
                ITypeSymbol? type = symbol switch
                {
                    ILocalSymbol local when local.DeclaringSyntaxReferences.Length > 0
                        && local.DeclaringSyntaxReferences[0].Span.End < position => local.Type,
                    IParameterSymbol parameter => parameter.Type,
                    _ => null,
                };
                if (InheritsFrom(type, schedulerType))
                {
                    return SyntaxFactory.IdentifierName(symbol.Name);
                }
            }
        }

        // A PriorityAsync before the one-engine change has no Priority.CurrentScheduler (and no pool to run on).
        bool hasCurrentScheduler = model.Compilation.GetTypeByMetadataName("PriorityAsync.Priority")?.GetMembers("CurrentScheduler").Length > 0;
        return SyntaxFactory.PostfixUnaryExpression(
            SyntaxKind.SuppressNullableWarningExpression,
            SyntaxFactory.MemberAccessExpression(
                SyntaxKind.SimpleMemberAccessExpression,
                SyntaxFactory.ParseTypeName(hasCurrentScheduler ? "global::PriorityAsync.Priority" : "global::PriorityAsync.PriorityContext")
                    .WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation),
                SyntaxFactory.IdentifierName(hasCurrentScheduler ? "CurrentScheduler" : "Current")));
    }

    /// <summary><c>context.TimeProvider</c> for the context in scope.</summary>
    public static ExpressionSyntax TimeProvider(SemanticModel model, int position) =>
        SyntaxFactory.MemberAccessExpression(
            SyntaxKind.SimpleMemberAccessExpression,
            Create(model, position),
            SyntaxFactory.IdentifierName("TimeProvider"));

    /// <summary>The nearest lambda around <paramref name="position"/> that is handed to a scheduler named by a variable, field,
    /// parameter or property (<c>pool.InvokeAsync(async () => ...)</c>): that name, or null.</summary>
    private static ExpressionSyntax? SchedulerRunningTheLambdaAround(SemanticModel model, int position, INamedTypeSymbol schedulerType)
    {
        SyntaxToken token = model.SyntaxTree.GetRoot().FindToken(position);
        foreach (SyntaxNode ancestor in token.Parent?.AncestorsAndSelf() ?? [])
        {
            if (ancestor is not AnonymousFunctionExpressionSyntax { Parent: ArgumentSyntax { Parent: ArgumentListSyntax { Parent: InvocationExpressionSyntax call } } }
                || model.GetOperation(call) is not IInvocationOperation invocation)
            {
                continue;
            }

            // context.InvokeAsync(f); context.GetTaskFactory(n).StartNew(f); context.GetSynchronizationContext(n).Post(f, state).
            IOperation? receiver = Strip(invocation.Instance);
            if (receiver is IInvocationOperation { TargetMethod.Name: "GetTaskFactory" or "GetSynchronizationContext" } getter)
            {
                receiver = Strip(getter.Instance);
            }

            if (receiver is ILocalReferenceOperation or IParameterReferenceOperation or IFieldReferenceOperation or IPropertyReferenceOperation
                && InheritsFrom(receiver.Type, schedulerType)
                && receiver.Syntax is ExpressionSyntax name)
            {
                return name.WithoutTrivia();
            }
        }

        return null;
    }

    private static IOperation? Strip(IOperation? operation)
    {
        while (operation is IConversionOperation conversion)
        {
            operation = conversion.Operand;
        }

        return operation;
    }

    private static bool InheritsFrom(ITypeSymbol? type, INamedTypeSymbol baseType)
    {
        for (ITypeSymbol? current = type; current is not null; current = current.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(current.OriginalDefinition, baseType))
            {
                return true;
            }
        }

        return false;
    }
}
