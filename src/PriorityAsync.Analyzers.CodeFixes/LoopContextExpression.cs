using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Simplification;

namespace PriorityAsync.Analyzers;

/// <summary>Names the priority context that runs the code at a position, for fixes that need its TimeProvider.</summary>
internal static class LoopContextExpression
{
    /// <summary>
    /// The scheduler in scope, best first: the worker's <c>Context</c> in an instance member of a PriorityBackgroundService subclass,
    /// its <c>Pool</c> in one of a PriorityThreadPoolBackgroundService subclass; a variable or parameter of type PriorityContext declared
    /// before <paramref name="position"/>; else <c>PriorityContext.Current!</c> (the code is on a loop, so it is not null there).
    /// </summary>
    public static ExpressionSyntax Create(SemanticModel model, int position)
    {
        INamedTypeSymbol? contextType = model.Compilation.GetTypeByMetadataName("PriorityAsync.PriorityContext");
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

        if (contextType is not null)
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
                if (type is not null && SymbolEqualityComparer.Default.Equals(type, contextType))
                {
                    return SyntaxFactory.IdentifierName(symbol.Name);
                }
            }
        }

        return SyntaxFactory.PostfixUnaryExpression(
            SyntaxKind.SuppressNullableWarningExpression,
            SyntaxFactory.MemberAccessExpression(
                SyntaxKind.SimpleMemberAccessExpression,
                SyntaxFactory.ParseTypeName("global::PriorityAsync.PriorityContext").WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation),
                SyntaxFactory.IdentifierName("Current")));
    }

    /// <summary><c>context.TimeProvider</c> for the context in scope.</summary>
    public static ExpressionSyntax TimeProvider(SemanticModel model, int position) =>
        SyntaxFactory.MemberAccessExpression(
            SyntaxKind.SimpleMemberAccessExpression,
            Create(model, position),
            SyntaxFactory.IdentifierName("TimeProvider"));

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
