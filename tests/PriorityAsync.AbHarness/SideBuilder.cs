using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

namespace PriorityAsync.AbHarness;

/// <summary>
/// Builds one side of an A/B: the library (from a project, a built assembly, or a git revision of this repository), then this harness
/// against it, into <c>&lt;out&gt;/&lt;side&gt;/</c> (lib/, obj/, bin/), so the two sides never share an output or intermediate folder.
/// </summary>
public static class SideBuilder
{
    /// <summary>This harness's project file, recorded at build time.</summary>
    public static string HarnessProject =>
        typeof(SideBuilder).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().First(a => a.Key == "HarnessProject").Value!;

    /// <summary>The harness assembly of a built side.</summary>
    public static string HarnessDll(string outDir, string side) => Path.Combine(outDir, side, "bin", "PriorityAsync.AbHarness.dll");

    /// <summary>Builds side <paramref name="side"/> from <paramref name="input"/>: a <c>.csproj</c>, a <c>PriorityAsync.dll</c>, or
    /// <c>git:&lt;revision&gt;</c> (archived from this repository into <c>&lt;out&gt;/&lt;side&gt;/src</c>, then built there).</summary>
    public static void Build(string outDir, string side, string input)
    {
        string sideDir = Path.GetFullPath(Path.Combine(outDir, side));
        Directory.CreateDirectory(sideDir);
        string libDll;
        if (input.StartsWith("git:", StringComparison.Ordinal))
        {
            string revision = input["git:".Length..];
            string src = Path.Combine(sideDir, "src");
            if (Directory.Exists(src))
            {
                Directory.Delete(src, recursive: true);
            }

            Directory.CreateDirectory(src);
            string repository = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(HarnessProject)!, "..", ".."));
            Shell("bash", "-c", $"git -C '{repository}' archive --format=tar '{revision}' | tar -x -C '{src}'");
            libDll = BuildLibrary(Path.Combine(src, "src", "PriorityAsync", "PriorityAsync.csproj"), sideDir);
        }
        else if (input.EndsWith(".csproj", StringComparison.OrdinalIgnoreCase))
        {
            libDll = BuildLibrary(Path.GetFullPath(input), sideDir);
        }
        else if (input.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) && File.Exists(input))
        {
            libDll = Path.GetFullPath(input);
        }
        else
        {
            throw new ArgumentException($"Side {side}: '{input}' is neither a .csproj, an existing PriorityAsync.dll, nor git:<revision>.");
        }

        Shell(
            "dotnet",
            "build",
            HarnessProject,
            "-c",
            "Release",
            "-nologo",
            "-v:q",
            "-o",
            Path.Combine(sideDir, "bin"),
            $"-p:PriorityAsyncAssembly={libDll}",
            // The side's own obj folder must not be shared with a project reference: the repository's analyzers (a
            // netstandard2.0 project every non-package project references) would restore into it. The harness's normal build checks them.
            "-p:PriorityAsyncAnalyzersReference=false",
            // The host-drain case compiles only against a library that has the host-driven context.
            $"-p:PriorityAsyncHostDrain={(DefinesType(libDll, "PriorityAsync", "PriorityContextDriver") ? "true" : "false")}",
            // The invoke case compiles only against a library that has InvokeAsync.
            $"-p:PriorityAsyncInvoke={(DefinesMethod(libDll, "PriorityAsync", "InvokeAsync") ? "true" : "false")}",
            $"-p:BaseIntermediateOutputPath={Path.Combine(sideDir, "obj")}{Path.DirectorySeparatorChar}");
        File.WriteAllText(Path.Combine(sideDir, "input.txt"), (input.StartsWith("git:", StringComparison.Ordinal) ? input : Path.GetFullPath(input)) + Environment.NewLine);
        Console.WriteLine($"side {side}: {input} -> {HarnessDll(outDir, side)}");
    }

    /// <summary>Whether the assembly at <paramref name="dll"/> defines the type, read from its metadata (nothing is loaded).</summary>
    private static bool DefinesType(string dll, string ns, string name) =>
        AnyTypeOf(dll, ns, (reader, type) => reader.GetString(type.Name) == name);

    /// <summary>Whether a type of namespace <paramref name="ns"/> in the assembly at <paramref name="dll"/> defines a method named
    /// <paramref name="name"/>, read from its metadata.</summary>
    private static bool DefinesMethod(string dll, string ns, string name) =>
        AnyTypeOf(dll, ns, (reader, type) => type.GetMethods().Any(method => reader.GetString(reader.GetMethodDefinition(method).Name) == name));

    private static bool AnyTypeOf(string dll, string ns, Func<MetadataReader, TypeDefinition, bool> match)
    {
        using FileStream stream = File.OpenRead(dll);
        using var pe = new PEReader(stream);
        MetadataReader reader = pe.GetMetadataReader();
        return reader.TypeDefinitions
            .Select(reader.GetTypeDefinition)
            .Any(type => reader.GetString(type.Namespace) == ns && match(reader, type));
    }

    private static string BuildLibrary(string project, string sideDir)
    {
        if (!File.Exists(project))
        {
            throw new ArgumentException($"No library project at '{project}'.");
        }

        string lib = Path.Combine(sideDir, "lib");
        Shell("dotnet", "build", project, "-c", "Release", "-nologo", "-v:q", "-o", lib);
        return Path.Combine(lib, "PriorityAsync.dll");
    }

    private static void Shell(string file, params string[] arguments)
    {
        var start = new ProcessStartInfo(file) { UseShellExecute = false };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {file}.");
        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"'{file} {string.Join(' ', arguments)}' failed with exit code {process.ExitCode}.");
        }
    }
}
