using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace PriorityAsync.Analyzers;

/// <summary>
/// Finds the ordinary lines that break a priority loop: pool timers (PA0001), blocking waits (PA0002), tasks nothing owns (PA0003),
/// Priority's static members after ConfigureAwait(false) (PA0004), helpers whose only await is Prioritize (PA0005), and (a
/// suggestion) locks that know nothing of levels (PA0006).
/// </summary>
/// <remarks>
/// One walk per member body (<see cref="MemberWalk"/>) collects the candidates and what tells where each piece of code runs; the
/// candidates are judged once the whole body is known, because a use of <c>Priority.Yield()</c> at the end of a method puts its
/// first line on the loop too. A compilation that does not reference PriorityAsync registers nothing.
/// </remarks>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class PriorityLoopAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc/>
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } = ImmutableArray.Create(
        Descriptors.PoolTimer,
        Descriptors.BlockingWait,
        Descriptors.UnownedTask,
        Descriptors.StaticPriorityOffLoop,
        Descriptors.PrioritizeInHelper,
        Descriptors.PriorityLock);

    /// <inheritdoc/>
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(static start =>
        {
            KnownSymbols? symbols = KnownSymbols.TryCreate(start.Compilation);
            if (symbols is null)
            {
                return;
            }

            start.RegisterOperationBlockAction(block =>
            {
                if (block.OwningSymbol is IMethodSymbol method)
                {
                    new MemberWalk(symbols, method, block.ReportDiagnostic).Run(block.OperationBlocks);
                }
            });
        });
    }
}
