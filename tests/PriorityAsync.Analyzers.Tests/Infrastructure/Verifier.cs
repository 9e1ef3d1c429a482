using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Testing;

namespace PriorityAsync.Analyzers.Tests.Infrastructure;

/// <summary>Runs <see cref="PriorityLoopAnalyzer"/> (and a code fix) over test sources.</summary>
internal static class Verifier
{
    /// <summary>The usings every test source gets, as a second file (so test sources stay short).</summary>
    public const string GlobalUsings = """
        global using System;
        global using System.Collections.Generic;
        global using System.Linq;
        global using System.Threading;
        global using System.Threading.Tasks;
        global using PriorityAsync;
        """;

    public static DiagnosticResult Diagnostic(string id) => id switch
    {
        "PA0001" => new DiagnosticResult(Descriptors.PoolTimer),
        "PA0002" => new DiagnosticResult(Descriptors.BlockingWait),
        "PA0003" => new DiagnosticResult(Descriptors.UnownedTask),
        "PA0004" => new DiagnosticResult(Descriptors.StaticPriorityOffLoop),
        "PA0005" => new DiagnosticResult(Descriptors.PrioritizeInHelper),
        "PA0006" => new DiagnosticResult(Descriptors.PriorityLock),
        _ => throw new ArgumentOutOfRangeException(nameof(id), id, "PA0001 to PA0006"),
    };

    /// <summary>Checks that <paramref name="source"/> (with {|PA0001:...|} markup, or <paramref name="expected"/>) produces exactly
    /// the expected diagnostics.</summary>
    public static Task AnalyzeAsync(string source, params DiagnosticResult[] expected) => AnalyzeAsync(source, libraryStandIns: null, expected);

    /// <summary>As <see cref="AnalyzeAsync(string, DiagnosticResult[])"/>, against stand-in PriorityAsync sources instead of the library.</summary>
    public static Task AnalyzeAsync(string source, string? libraryStandIns, params DiagnosticResult[] expected)
    {
        var test = new CSharpAnalyzerTest<PriorityLoopAnalyzer, DefaultVerifier> { ReferenceAssemblies = TestReferences.None };
        test.TestState.Sources.Add(source);
        test.TestState.Sources.Add(("Usings.cs", GlobalUsings));
        AddLibrary(test.TestState, libraryStandIns);
        test.ExpectedDiagnostics.AddRange(expected);
        return test.RunAsync();
    }

    /// <summary>As <see cref="AnalyzeAsync(string, DiagnosticResult[])"/>, for a program of top-level statements (the README's kind:
    /// its local functions are declared beside <c>PriorityContext.Run</c> and called inside its lambda).</summary>
    public static Task AnalyzeProgramAsync(string source)
    {
        var test = new CSharpAnalyzerTest<PriorityLoopAnalyzer, DefaultVerifier> { ReferenceAssemblies = TestReferences.None };
        test.TestState.OutputKind = OutputKind.ConsoleApplication;
        test.TestState.Sources.Add(source);
        test.TestState.Sources.Add(("Usings.cs", GlobalUsings));
        AddLibrary(test.TestState, libraryStandIns: null);
        return test.RunAsync();
    }

    /// <summary>Checks that <typeparamref name="TFix"/> turns <paramref name="source"/> into <paramref name="fixedSource"/>.</summary>
    public static Task FixAsync<TFix>(string source, string fixedSource, string? libraryStandIns = null, params DiagnosticResult[] expected)
        where TFix : CodeFixProvider, new()
    {
        var test = new CSharpCodeFixTest<PriorityLoopAnalyzer, TFix, DefaultVerifier>
        {
            ReferenceAssemblies = TestReferences.None,
            // A fixed source may still carry a diagnostic another rule reports; each test says which it expects.
            CodeFixTestBehaviors = CodeFixTestBehaviors.SkipFixAllCheck,
        };
        test.TestState.Sources.Add(source);
        test.TestState.Sources.Add(("Usings.cs", GlobalUsings));
        AddLibrary(test.TestState, libraryStandIns);
        // The fixed state inherits the references; it lists its own sources.
        test.FixedState.Sources.Add(fixedSource);
        test.FixedState.Sources.Add(("Usings.cs", GlobalUsings));
        if (libraryStandIns is not null)
        {
            test.FixedState.Sources.Add(("StandIns.cs", libraryStandIns));
        }
        test.ExpectedDiagnostics.AddRange(expected);
        return test.RunAsync();
    }

    /// <summary>
    /// Checks that Fix All of <typeparamref name="TFix"/> turns <paramref name="source"/> into <paramref name="fixedSource"/> in one
    /// pass, in the document, the project and the solution, as <c>dotnet format</c> applies it; <paramref name="remaining"/> are the
    /// diagnostics no fix removes. Fixing one diagnostic at a time must reach the same source.
    /// </summary>
    public static Task FixAllAsync<TFix>(string source, string fixedSource, int diagnostics, params DiagnosticResult[] remaining)
        where TFix : CodeFixProvider, new()
    {
        var test = new CSharpCodeFixTest<PriorityLoopAnalyzer, TFix, DefaultVerifier>
        {
            ReferenceAssemblies = TestReferences.None,
            NumberOfFixAllIterations = 1,
            NumberOfFixAllInDocumentIterations = 1,
            NumberOfFixAllInProjectIterations = 1,
            NumberOfIncrementalIterations = diagnostics,
        };
        test.TestState.Sources.Add(source);
        test.TestState.Sources.Add(("Usings.cs", GlobalUsings));
        AddLibrary(test.TestState, libraryStandIns: null);
        test.FixedState.Sources.Add(fixedSource);
        test.FixedState.Sources.Add(("Usings.cs", GlobalUsings));
        test.FixedState.ExpectedDiagnostics.AddRange(remaining);
        test.FixedState.MarkupHandling = MarkupMode.Allow;
        return test.RunAsync();
    }

    private static void AddLibrary(SolutionState state, string? libraryStandIns)
    {
        TestReferences.Add(state, includeLibrary: libraryStandIns is null);
        if (libraryStandIns is not null)
        {
            state.Sources.Add(("StandIns.cs", libraryStandIns));
        }
    }
}
