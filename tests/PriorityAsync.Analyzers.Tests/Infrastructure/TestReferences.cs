using System.IO;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Testing;

namespace PriorityAsync.Analyzers.Tests.Infrastructure;

/// <summary>
/// What the test sources compile against: the running .NET's own assemblies, and the real PriorityAsync, PriorityAsync.Hosting,
/// Microsoft.Extensions and Nito.AsyncEx assemblies this test project references. Taken from the process, not downloaded: the tests
/// run offline and against exactly the library the repository builds.
/// </summary>
internal static class TestReferences
{
    private static readonly Lazy<MetadataReference[]> s_withLibrary = new(() => Load(includeLibrary: true));
    private static readonly Lazy<MetadataReference[]> s_frameworkOnly = new(() => Load(includeLibrary: false));

    /// <summary>An empty reference set: <see cref="Add"/> supplies every reference, so nothing is resolved from a package source.</summary>
    public static ReferenceAssemblies None { get; } = new("net10.0");

    /// <summary>Adds the references to <paramref name="state"/>; with <paramref name="includeLibrary"/> false, only the framework
    /// (for sources that declare their own stand-in PriorityAsync types).</summary>
    public static void Add(SolutionState state, bool includeLibrary)
    {
        state.AdditionalReferences.AddRange(includeLibrary ? s_withLibrary.Value : s_frameworkOnly.Value);
    }

    private static MetadataReference[] Load(bool includeLibrary)
    {
        string runtimeDirectory = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        string trusted = (string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!;
        return trusted.Split(Path.PathSeparator)
            .Where(path => Path.GetDirectoryName(path) == runtimeDirectory
                || (includeLibrary && IsLibrary(Path.GetFileName(path))))
            .Where(path => !Path.GetFileName(path).StartsWith("Microsoft.CodeAnalysis", StringComparison.Ordinal))
            .Select(path => (MetadataReference)MetadataReference.CreateFromFile(path))
            .ToArray();
    }

    private static bool IsLibrary(string fileName) =>
        fileName is "PriorityAsync.dll" or "PriorityAsync.Hosting.dll"
        || fileName.StartsWith("Microsoft.Extensions.", StringComparison.Ordinal)
        || fileName.StartsWith("Nito.", StringComparison.Ordinal); // AsyncEx's AsyncLock (PA0006)
}
