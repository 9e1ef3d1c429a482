using System.IO;

namespace Samples.Tests;

/// <summary>
/// The samples stay small enough to read: at most 12,400 lines of C# under samples/, and no sample README over 250 lines (BrokerWorker's
/// <c>--help</c>, the longest, is held to 20 options in its own tests). A change that adds to a sample pays for it elsewhere.
/// </summary>
public sealed class SampleBudgetTests
{
    private const int MaxCodeLines = 12_400;
    private const int MaxReadmeLines = 250;

    [Fact]
    public void Samples_LinesOfCSharp_AtMostTheBudget()
    {
        int lines = SampleFiles("*.cs").Sum(f => File.ReadLines(f).Count());

        lines.Should().BeLessThanOrEqualTo(MaxCodeLines, "samples/ holds at most {0} lines of C#", MaxCodeLines);
    }

    [Fact]
    public void SampleReadmes_EachAtMostTheBudget()
    {
        string[] readmes = [.. SampleFiles("README.md")];

        readmes.Should().NotBeEmpty();
        readmes.Select(f => (File: Path.GetRelativePath(RepositoryRoot(), f), Lines: File.ReadLines(f).Count()))
            .Where(r => r.Lines > MaxReadmeLines)
            .Should().BeEmpty("no sample README is over {0} lines", MaxReadmeLines);
    }

    /// <summary>The files named <paramref name="pattern"/> under samples/, leaving out the build's output (bin, obj).</summary>
    private static IEnumerable<string> SampleFiles(string pattern) =>
        Directory.EnumerateFiles(Path.Combine(RepositoryRoot(), "samples"), pattern, SearchOption.AllDirectories)
            .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"));

    private static string RepositoryRoot()
    {
        string? dir = AppContext.BaseDirectory;
        while (dir is not null && !File.Exists(Path.Combine(dir, "PriorityAsync.sln")))
        {
            dir = Path.GetDirectoryName(dir);
        }

        return dir ?? throw new InvalidOperationException("The repository root (PriorityAsync.sln) is not above the test's directory.");
    }

}
