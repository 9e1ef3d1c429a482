using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace Snippets;

/// <summary>
/// The paste rule: a C# block is a whole program that compiles as pasted into <c>dotnet new console</c> with the PriorityAsync
/// package added, or its first line is one comment, <c>// Needs: ...</c>, that says what it needs around it. A needs line that names
/// files of the repository (<c>// Needs: ... samples/HostingGettingStarted/Worker.cs beside it</c>) makes the block a program compiled with those
/// files; one that names the PriorityAsync.Hosting package adds that package, and <c>dotnet new worker</c> (the Generic Host's
/// template) stands for that template's usings and packages.
/// </summary>
internal static partial class PasteCheck
{
    /// <summary>The first words of a block that says what it needs around it.</summary>
    public const string NeedsPrefix = "// Needs:";

    /// <summary>The global usings of <c>dotnet new console</c> (ImplicitUsings=enable, Microsoft.NET.Sdk).</summary>
    public static readonly string[] ConsoleUsings =
        ["System", "System.Collections.Generic", "System.IO", "System.Linq", "System.Net.Http", "System.Threading", "System.Threading.Tasks"];

    /// <summary>The global usings that <c>dotnet new worker</c> (Microsoft.NET.Sdk.Worker) adds to those of a console app.</summary>
    public static readonly string[] WorkerUsings =
        ["Microsoft.Extensions.Configuration", "Microsoft.Extensions.DependencyInjection", "Microsoft.Extensions.Hosting", "Microsoft.Extensions.Logging"];

    private static readonly Lazy<MetadataReference[]> s_core = new(() => References(hosting: false));
    private static readonly Lazy<MetadataReference[]> s_hosting = new(() => References(hosting: true));

    /// <summary>What a block of <paramref name="where"/> breaks of the paste rule, or null when it keeps it.</summary>
    public static string? Check(string root, string where, string code)
    {
        string first = code.Split('\n')[0].Trim();
        var sources = new List<(string Name, string Text)> { ("Program.cs", code) };
        bool hosting = false;
        bool worker = false;
        if (first.StartsWith(NeedsPrefix, StringComparison.Ordinal))
        {
            foreach (Match path in RepositoryFile().Matches(first))
            {
                string file = Path.Combine(root, path.Value);
                if (File.Exists(file))
                {
                    sources.Add((path.Value, File.ReadAllText(file)));
                }
            }

            if (sources.Count == 1)
            {
                return null; // a fragment: its first line says what it needs, and its source compiles where it is
            }

            worker = first.Contains("dotnet new worker", StringComparison.Ordinal);
            hosting = worker || first.Contains("PriorityAsync.Hosting", StringComparison.Ordinal);
        }

        Diagnostic[] errors = Compile(sources, hosting, worker).GetDiagnostics()
            .Where(d => d.Severity >= DiagnosticSeverity.Warning && !d.IsSuppressed)
            .OrderBy(d => d.Location.SourceSpan.Start)
            .ToArray();
        if (errors.Length == 0)
        {
            return null;
        }

        string found = string.Join("; ", errors.Take(1).Select(d =>
            $"{d.Id} at {Path.GetFileName(d.Location.SourceTree?.FilePath)}:{d.Location.GetLineSpan().StartLinePosition.Line + 1} {d.GetMessage()}"));
        return $"{where}: a C# block that does not compile as pasted into `dotnet new console` ({found}): make it a whole program, " +
            $"or start it with one line '{NeedsPrefix} ...' that says what it needs around it (tools/Snippets/README.md).";
    }

    /// <summary>
    /// Compiles <paramref name="sources"/> as the Program.cs (and other files) of <c>dotnet new console</c>: implicit usings, nullable
    /// on, the newest language version, and the PriorityAsync package (with <paramref name="hosting"/>, PriorityAsync.Hosting and the
    /// Microsoft.Extensions packages of a worker too; with <paramref name="worker"/>, the usings of <c>dotnet new worker</c> too).
    /// </summary>
    public static CSharpCompilation Compile(IEnumerable<(string Name, string Text)> sources, bool hosting, bool worker = false)
    {
        var parse = new CSharpParseOptions(LanguageVersion.Latest);
        string usings = string.Concat(ConsoleUsings.Concat(worker ? WorkerUsings : []).Select(u => $"global using global::{u};\n"));
        IEnumerable<SyntaxTree> trees = sources
            .Select(s => CSharpSyntaxTree.ParseText(s.Text, parse, s.Name))
            .Append(CSharpSyntaxTree.ParseText(usings, parse, "GlobalUsings.g.cs"));
        var options = new CSharpCompilationOptions(OutputKind.ConsoleApplication, nullableContextOptions: NullableContextOptions.Enable)
            .WithSpecificDiagnosticOptions([new("CS1701", ReportDiagnostic.Suppress), new("CS1702", ReportDiagnostic.Suppress)]);
        return CSharpCompilation.Create("Pasted", trees, hosting ? s_hosting.Value : s_core.Value, options);
    }

    // The running .NET's assemblies (the framework a console app targets) and the packages' assemblies, which this tool's (and the
    // docs tests') output folder holds as project and package references: exactly what the repository builds, nothing downloaded.
    private static MetadataReference[] References(bool hosting)
    {
        string runtime = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        IEnumerable<string> framework = Directory.EnumerateFiles(runtime, "*.dll")
            .Where(f => Path.GetFileName(f).StartsWith("System", StringComparison.Ordinal)
                || Path.GetFileName(f) is "mscorlib.dll" or "netstandard.dll" or "Microsoft.Win32.Primitives.dll" or "Microsoft.CSharp.dll");
        IEnumerable<string> packages = Directory.EnumerateFiles(AppContext.BaseDirectory, "*.dll")
            .Where(f => Path.GetFileName(f) == "PriorityAsync.dll"
                || (hosting && (Path.GetFileName(f) == "PriorityAsync.Hosting.dll" || Path.GetFileName(f).StartsWith("Microsoft.Extensions.", StringComparison.Ordinal))));
        return framework.Concat(packages).Where(IsAssembly).Select(f => (MetadataReference)MetadataReference.CreateFromFile(f)).ToArray();
    }

    private static bool IsAssembly(string file)
    {
        try
        {
            System.Reflection.AssemblyName.GetAssemblyName(file);
            return true;
        }
        catch (BadImageFormatException)
        {
            return false; // a native library beside the managed ones
        }
    }

    [GeneratedRegex(@"[\w./-]+\.cs\b")]
    private static partial Regex RepositoryFile();
}
