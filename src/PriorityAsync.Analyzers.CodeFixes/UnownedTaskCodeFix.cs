using System.Collections.Generic;
using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Simplification;

namespace PriorityAsync.Analyzers;

/// <summary>
/// PA0003's fix: the discarded (or unawaited) task becomes a child of a scope, which waits for it and surfaces its exception. Inside
/// a lambda or method with a TaskScope parameter, <c>_ = FooAsync(x);</c> becomes <c>scope.Start(_ => FooAsync(x));</c>; elsewhere
/// <c>Priority.Start(_ => FooAsync(x));</c> (a child of the loop's root scope). Start returns nothing (the scope owns the child), so the
/// statement needs no discard, in an async function or not. Offered only where the compilation has that API. Fix All rewrites every
/// fixable statement of a document in one pass, nested ones included (an unowned task inside an unowned scope's body).
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(UnownedTaskCodeFix))]
[Shared]
public sealed class UnownedTaskCodeFix : CodeFixProvider
{
    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.UnownedTask.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => FixAllProvider.Create(
        async (context, document, diagnostics) => await FixAsync(document, diagnostics, context.CancellationToken).ConfigureAwait(false));

    /// <inheritdoc/>
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        SemanticModel? model = await context.Document.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return;
        }

        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            if (Fixable(root, model, diagnostic, context.CancellationToken) is not { } fixable)
            {
                continue;
            }

            string? scope = fixable.Scope;
            string title = scope is null ? "Start as a child of the loop (Priority.Start)" : $"Start as a child of '{scope}'";
            context.RegisterCodeFix(
                CodeAction.Create(title, token => FixAsync(context.Document, [diagnostic], token), equivalenceKey: "StartAsChild"),
                diagnostic);
        }
    }

    /// <summary>The statement of <paramref name="diagnostic"/>, its task and the scope to start it in (null: Priority.Start), when
    /// it has a fix.</summary>
    private static (ExpressionStatementSyntax Statement, ExpressionSyntax Task, string? Scope)? Fixable(
        SyntaxNode root, SemanticModel model, Diagnostic diagnostic, CancellationToken cancellationToken)
    {
        if (root.FindNode(diagnostic.Location.SourceSpan) is not ExpressionStatementSyntax statement
            || TaskExpression(statement) is not { } task
            || task is ConditionalAccessExpressionSyntax)
        {
            return null; // x?.FooAsync() may be null: no child to start.
        }

        string? scope = ScopeInScope(statement, model, cancellationToken);
        return scope is null && !HasPriorityStart(model.Compilation) ? null : (statement, task, scope);
    }

    /// <summary>Fixes <paramref name="diagnostics"/> of <paramref name="document"/> at once: each statement is rewritten from the
    /// statement with its fixed descendants (ReplaceNodes); types and scopes are read from the original nodes, which the model knows.</summary>
    private static async Task<Document> FixAsync(Document document, ImmutableArray<Diagnostic> diagnostics, CancellationToken cancellationToken)
    {
        SyntaxNode? root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        SemanticModel? model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return document;
        }

        var fixes = new Dictionary<SyntaxNode, (ExpressionSyntax Task, string? Scope)>();
        foreach (Diagnostic diagnostic in diagnostics)
        {
            if (Fixable(root, model, diagnostic, cancellationToken) is var (statement, task, scope))
            {
                fixes[statement] = (task, scope);
            }
        }

        SyntaxNode fixedRoot = root.ReplaceNodes(fixes.Keys, (original, current) =>
            StartAsChild((ExpressionStatementSyntax)current, fixes[original].Task, fixes[original].Scope, model, cancellationToken));
        return document.WithSyntaxRoot(fixedRoot);
    }

    /// <summary><c>_ = X;</c> (in its <paramref name="current"/> form) as <c>scope.Start(_ => X);</c> or <c>Priority.Start(_ => X);</c>;
    /// <paramref name="originalTask"/> is X as the model knows it.</summary>
    private static ExpressionStatementSyntax StartAsChild(
        ExpressionStatementSyntax current, ExpressionSyntax originalTask, string? scope, SemanticModel model, CancellationToken cancellationToken)
    {
        if (TaskExpression(current) is not { } task)
        {
            return current;
        }

        // A ValueTask becomes a Task for the child's Func<CancellationToken, Task>.
        ExpressionSyntax body = task.WithoutTrivia();
        if (model.GetTypeInfo(originalTask, cancellationToken).Type is INamedTypeSymbol { Name: "ValueTask", ContainingNamespace.Name: "Tasks" })
        {
            body = SyntaxFactory.InvocationExpression(
                SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, body, SyntaxFactory.IdentifierName("AsTask")));
        }

        ExpressionSyntax target = scope is null
            ? SyntaxFactory.ParseExpression("global::PriorityAsync.Priority.Start").WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation)
            : SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, SyntaxFactory.IdentifierName(scope), SyntaxFactory.IdentifierName("Start"));
        LambdaExpressionSyntax child = SyntaxFactory.SimpleLambdaExpression(SyntaxFactory.Parameter(SyntaxFactory.Identifier("_")), body);
        ExpressionSyntax start = SyntaxFactory.InvocationExpression(
            target, SyntaxFactory.ArgumentList(SyntaxFactory.SingletonSeparatedList(SyntaxFactory.Argument(child))));
        return current.WithExpression(start).WithTriviaFrom(current);
    }

    /// <summary>The task of <c>_ = X;</c> or <c>X;</c>.</summary>
    private static ExpressionSyntax? TaskExpression(ExpressionStatementSyntax statement) => statement.Expression switch
    {
        AssignmentExpressionSyntax { Left: IdentifierNameSyntax { Identifier.ValueText: "_" }, Right: var right } => right,
        AssignmentExpressionSyntax => null,
        var expression => expression,
    };

    /// <summary>The name of a TaskScope parameter of an enclosing lambda, local function or method, nearest first.</summary>
    private static string? ScopeInScope(SyntaxNode node, SemanticModel model, CancellationToken cancellationToken)
    {
        INamedTypeSymbol? scopeType = model.Compilation.GetTypeByMetadataName("PriorityAsync.TaskScope");
        if (scopeType is null)
        {
            return null;
        }

        foreach (SyntaxNode ancestor in node.Ancestors())
        {
            IMethodSymbol? function = ancestor switch
            {
                AnonymousFunctionExpressionSyntax lambda => model.GetSymbolInfo(lambda, cancellationToken).Symbol as IMethodSymbol,
                LocalFunctionStatementSyntax or BaseMethodDeclarationSyntax => model.GetDeclaredSymbol(ancestor, cancellationToken) as IMethodSymbol,
                _ => null,
            };
            IParameterSymbol? parameter = function?.Parameters.FirstOrDefault(p => SymbolEqualityComparer.Default.Equals(p.Type, scopeType));
            if (parameter is not null)
            {
                return parameter.Name;
            }
        }

        return null;
    }

    private static bool HasPriorityStart(Compilation compilation) =>
        compilation.GetTypeByMetadataName("PriorityAsync.Priority")?.GetMembers("Start").Length > 0;
}
