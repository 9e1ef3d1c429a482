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
/// statement needs no discard, in an async function or not. Offered only where the compilation has that API.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(UnownedTaskCodeFix))]
[Shared]
public sealed class UnownedTaskCodeFix : CodeFixProvider
{
    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.UnownedTask.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

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
            if (root.FindNode(diagnostic.Location.SourceSpan) is not ExpressionStatementSyntax statement
                || TaskExpression(statement) is not { } task
                || task is ConditionalAccessExpressionSyntax)
            {
                continue; // x?.FooAsync() may be null: no child to start.
            }

            string? scope = ScopeInScope(statement, model, context.CancellationToken);
            if (scope is null && !HasPriorityStart(model.Compilation))
            {
                continue;
            }

            string title = scope is null ? "Start as a child of the loop (Priority.Start)" : $"Start as a child of '{scope}'";
            context.RegisterCodeFix(
                CodeAction.Create(title, token => FixAsync(context.Document, statement, task, scope, token), equivalenceKey: "StartAsChild"),
                diagnostic);
        }
    }

    private static async Task<Document> FixAsync(
        Document document, ExpressionStatementSyntax statement, ExpressionSyntax task, string? scope, CancellationToken cancellationToken)
    {
        SyntaxNode? root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        SemanticModel? model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return document;
        }

        // A ValueTask becomes a Task for the child's Func<CancellationToken, Task>.
        ExpressionSyntax body = task.WithoutTrivia();
        if (model.GetTypeInfo(task, cancellationToken).Type is INamedTypeSymbol { Name: "ValueTask", ContainingNamespace.Name: "Tasks" })
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

        ExpressionStatementSyntax replacement = statement.WithExpression(start).WithTriviaFrom(statement);
        return document.WithSyntaxRoot(root.ReplaceNode(statement, replacement));
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
