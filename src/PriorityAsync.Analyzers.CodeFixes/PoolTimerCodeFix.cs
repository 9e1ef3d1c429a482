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
/// PA0001's fixes. An awaited <c>Task.Delay(d, ct)</c> becomes <c>Priority.Delay(d, ct)</c> (the loop's allocation-free timer). A
/// delay used as a value (WhenAny, stored, passed on) keeps its Task and gets the context's TimeProvider, because Priority.Delay returns
/// a ValueTask that may be awaited once only; so do PeriodicTimer, CancellationTokenSource(delay) and WaitAsync(timeout). A Timer gets
/// no fix: <c>TimeProvider.CreateTimer</c> returns an ITimer, not a Timer, so its uses change too.
/// Fix All rewrites every fixable diagnostic of a document in one pass, nested ones included (<c>Task.Delay(d).WaitAsync(t)</c>),
/// whatever fix was asked for first: <c>dotnet format</c> asks with the first diagnostic it finds, which may be a Timer's.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(PoolTimerCodeFix))]
[Shared]
public sealed class PoolTimerCodeFix : CodeFixProvider
{
    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.PoolTimer.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => FixAllProvider.Create(
        async (context, document, diagnostics) => await FixAsync(document, diagnostics, context.CancellationToken).ConfigureAwait(false));

    /// <inheritdoc/>
    public override Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            if (!diagnostic.Properties.TryGetValue(MemberWalk.TimerKindProperty, out string? kind))
            {
                continue;
            }

            string? title = kind switch
            {
                MemberWalk.DelayAwaited => "Use Priority.Delay (the loop's timer)",
                MemberWalk.DelayValue or MemberWalk.PeriodicTimer or MemberWalk.CancellationTokenSource or MemberWalk.WaitAsync =>
                    "Use the priority context's TimeProvider",
                _ => null,
            };
            if (title is null)
            {
                continue;
            }

            context.RegisterCodeFix(
                CodeAction.Create(title, token => FixAsync(context.Document, [diagnostic], token), equivalenceKey: title),
                diagnostic);
        }

        return Task.CompletedTask;
    }

    /// <summary>Fixes <paramref name="diagnostics"/> of <paramref name="document"/> at once: each node is rewritten from the node
    /// with its fixed descendants (ReplaceNodes), and the types are read from the original nodes, which the model knows.</summary>
    private static async Task<Document> FixAsync(Document document, ImmutableArray<Diagnostic> diagnostics, CancellationToken cancellationToken)
    {
        SemanticModel? model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        SyntaxNode? root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        if (model is null || root is null)
        {
            return document;
        }

        var kinds = new Dictionary<SyntaxNode, string>();
        foreach (Diagnostic diagnostic in diagnostics)
        {
            SyntaxNode node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            if (diagnostic.Properties.TryGetValue(MemberWalk.TimerKindProperty, out string? kind) && kind is not null
                && node is InvocationExpressionSyntax or ObjectCreationExpressionSyntax { ArgumentList: not null })
            {
                kinds[node] = kind;
            }
        }

        SyntaxNode fixedRoot = root.ReplaceNodes(kinds.Keys, (original, current) => kinds[original] switch
        {
            MemberWalk.DelayAwaited => PriorityDelay((InvocationExpressionSyntax)original, (InvocationExpressionSyntax)current, model, cancellationToken),
            MemberWalk.DelayValue or MemberWalk.PeriodicTimer or MemberWalk.CancellationTokenSource or MemberWalk.WaitAsync =>
                WithTimeProvider(original, current, model, cancellationToken),
            _ => current,
        });
        return document.WithSyntaxRoot(fixedRoot);
    }

    /// <summary>Task.Delay(100, ct) -> Priority.Delay(TimeSpan.FromMilliseconds(100), ct).</summary>
    private static InvocationExpressionSyntax PriorityDelay(
        InvocationExpressionSyntax original, InvocationExpressionSyntax current, SemanticModel model, CancellationToken cancellationToken)
    {
        ArgumentListSyntax arguments = AsTimeSpans(original.ArgumentList, current.ArgumentList, model, cancellationToken);
        ExpressionSyntax target = SyntaxFactory.ParseExpression("global::PriorityAsync.Priority.Delay")
            .WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation);
        return SyntaxFactory.InvocationExpression(target, arguments).WithTriviaFrom(current);
    }

    /// <summary>Inserts context.TimeProvider after the delay, period or timeout (the first argument), as the overloads take it.</summary>
    private static SyntaxNode WithTimeProvider(SyntaxNode original, SyntaxNode current, SemanticModel model, CancellationToken cancellationToken)
    {
        (ArgumentListSyntax? originalList, ArgumentListSyntax? currentList) = (original, current) switch
        {
            (InvocationExpressionSyntax o, InvocationExpressionSyntax c) => (o.ArgumentList, c.ArgumentList),
            (ObjectCreationExpressionSyntax o, ObjectCreationExpressionSyntax c) => (o.ArgumentList, c.ArgumentList),
            _ => (null, null),
        };
        if (originalList is null || currentList is null)
        {
            return current;
        }

        ArgumentListSyntax arguments = AsTimeSpans(originalList, currentList, model, cancellationToken);
        ArgumentSyntax timeProvider = SyntaxFactory.Argument(LoopContextExpression.TimeProvider(model, original.SpanStart));
        arguments = arguments.WithArguments(arguments.Arguments.Insert(1, timeProvider));
        return current switch
        {
            InvocationExpressionSyntax invocation => invocation.WithArgumentList(arguments),
            ObjectCreationExpressionSyntax creation => creation.WithArgumentList(arguments),
            _ => current,
        };
    }

    /// <summary>The TimeProvider and Priority.Delay overloads take TimeSpans only: an int of milliseconds becomes
    /// TimeSpan.FromMilliseconds(value), and loses its parameter name (millisecondsDelay), which the new overload does not have.</summary>
    private static ArgumentListSyntax AsTimeSpans(
        ArgumentListSyntax originalList, ArgumentListSyntax list, SemanticModel model, CancellationToken cancellationToken)
    {
        // The types come from the original arguments: a replaced argument is no longer in the model's tree.
        SeparatedSyntaxList<ArgumentSyntax> original = originalList.Arguments;
        SeparatedSyntaxList<ArgumentSyntax> arguments = list.Arguments;
        for (int i = 0; i < original.Count; i++)
        {
            ArgumentSyntax argument = arguments[i];
            ITypeSymbol? type = model.GetTypeInfo(original[i].Expression, cancellationToken).ConvertedType;
            if (type?.SpecialType == SpecialType.System_Int32 && i == 0)
            {
                ExpressionSyntax fromMilliseconds = SyntaxFactory.InvocationExpression(
                    SyntaxFactory.ParseExpression("global::System.TimeSpan.FromMilliseconds")
                        .WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation),
                    SyntaxFactory.ArgumentList(SyntaxFactory.SingletonSeparatedList(SyntaxFactory.Argument(argument.Expression.WithoutTrivia()))));
                arguments = arguments.Replace(argument, SyntaxFactory.Argument(fromMilliseconds).WithTriviaFrom(argument));
            }
            else if (argument.NameColon is { } name && name.Name.Identifier.ValueText is "delay" or "period" or "timeout")
            {
                arguments = arguments.Replace(argument, argument.WithNameColon(null));
            }
        }

        return list.WithArguments(arguments);
    }
}
