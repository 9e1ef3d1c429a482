using System.IO;
using System.Reflection;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Emit;
using Snippets;

namespace Docs.Tests;

/// <summary>
/// Runs a whole program of the docs as a user who pasted it into <c>dotnet new console</c> would: compiled as that project compiles
/// it (the paste rule's compilation, tools/Snippets), then its entry point run on its own thread with the console captured.
/// </summary>
internal static class PastedProgram
{
    public static (int ExitCode, string Output) Run(string relativePath, params string[] args)
    {
        string root = Repository.FindRoot(AppContext.BaseDirectory);
        string text = File.ReadAllText(Path.Combine(root, relativePath));
        using var image = new MemoryStream();
        EmitResult emitted = PasteCheck.Compile([("Program.cs", text)], hosting: false).Emit(image);
        emitted.Diagnostics.Where(d => d.Severity >= DiagnosticSeverity.Warning).Select(d => d.ToString())
            .Should().BeEmpty($"{relativePath} compiles as pasted into `dotnet new console`");
        return OwnThread.RunEntryPoint(Assembly.Load(image.ToArray()), args);
    }
}
