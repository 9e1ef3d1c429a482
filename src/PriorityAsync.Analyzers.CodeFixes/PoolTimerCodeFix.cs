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
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(PoolTimerCodeFix))]
[Shared]
public sealed class PoolTimerCodeFix : CodeFixProvider
{
    /// <inheritdoc/>
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.PoolTimer.Id);

    /// <inheritdoc/>
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc/>
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        SyntaxNode? root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null)
        {
            return;
        }

        foreach (Diagnostic diagnostic in context.Diagnostics)
        {
            if (!diagnostic.Properties.TryGetValue(MemberWalk.TimerKindProperty, out string? kind))
            {
                continue;
            }

            SyntaxNode node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
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
                CodeAction.Create(title, token => FixAsync(context.Document, node, kind!, token), equivalenceKey: title),
                diagnostic);
        }
    }

    private static async Task<Document> FixAsync(Document document, SyntaxNode node, string kind, CancellationToken cancellationToken)
    {
        SemanticModel? model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        SyntaxNode? root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        if (model is null || root is null)
        {
            return document;
        }

        SyntaxNode? replacement = node switch
        {
            InvocationExpressionSyntax invocation when kind == MemberWalk.DelayAwaited => PriorityDelay(invocation, model, cancellationToken),
            InvocationExpressionSyntax invocation => WithTimeProvider(invocation, invocation.ArgumentList, model, cancellationToken),
            ObjectCreationExpressionSyntax { ArgumentList: { } arguments } creation => WithTimeProvider(creation, arguments, model, cancellationToken),
            _ => null,
        };
        return replacement is null ? document : document.WithSyntaxRoot(root.ReplaceNode(node, replacement));
    }

    /// <summary>Task.Delay(100, ct) -> Priority.Delay(TimeSpan.FromMilliseconds(100), ct).</summary>
    private static InvocationExpressionSyntax PriorityDelay(InvocationExpressionSyntax invocation, SemanticModel model, CancellationToken cancellationToken)
    {
        ArgumentListSyntax arguments = AsTimeSpans(invocation.ArgumentList, model, cancellationToken);
        ExpressionSyntax target = SyntaxFactory.ParseExpression("global::PriorityAsync.Priority.Delay")
            .WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation);
        return SyntaxFactory.InvocationExpression(target, arguments).WithTriviaFrom(invocation);
    }

    /// <summary>Inserts context.TimeProvider after the delay, period or timeout (the first argument), as the overloads take it.</summary>
    private static SyntaxNode WithTimeProvider(SyntaxNode node, ArgumentListSyntax list, SemanticModel model, CancellationToken cancellationToken)
    {
        ArgumentListSyntax arguments = AsTimeSpans(list, model, cancellationToken);
        ArgumentSyntax timeProvider = SyntaxFactory.Argument(LoopContextExpression.TimeProvider(model, node.SpanStart));
        arguments = arguments.WithArguments(arguments.Arguments.Insert(1, timeProvider));
        return node switch
        {
            InvocationExpressionSyntax invocation => invocation.WithArgumentList(arguments),
            ObjectCreationExpressionSyntax creation => creation.WithArgumentList(arguments),
            _ => node,
        };
    }

    /// <summary>The TimeProvider and Priority.Delay overloads take TimeSpans only: an int of milliseconds becomes
    /// TimeSpan.FromMilliseconds(value), and loses its parameter name (millisecondsDelay), which the new overload does not have.</summary>
    private static ArgumentListSyntax AsTimeSpans(ArgumentListSyntax list, SemanticModel model, CancellationToken cancellationToken)
    {
        // The types come from the original arguments: a replaced argument is no longer in the model's tree.
        SeparatedSyntaxList<ArgumentSyntax> original = list.Arguments;
        SeparatedSyntaxList<ArgumentSyntax> arguments = original;
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
