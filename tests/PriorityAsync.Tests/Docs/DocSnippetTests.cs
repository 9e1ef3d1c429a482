using System.IO;

namespace PriorityAsync.Tests.Docs;

/// <summary>A code block of the docs that is a copy of compiled, tested code: the copy must not drift from it.</summary>
public class DocSnippetTests
{
    [Fact]
    public void TestingDoc_FakeClockExample_IsTheCompiledAndTestedCode()
    {
        string root = RepositoryRoot();
        string source = File.ReadAllText(Path.Combine(root, "tests", "PriorityAsync.Tests", "Docs", "FakeClockExampleTests.cs"));
        string doc = File.ReadAllText(Path.Combine(root, "docs", "testing.md"));

        string region = Between(source, "#region docs/testing.md: fake clock\n", "    #endregion");
        string block = Between(doc, "<!-- snippet: tests/PriorityAsync.Tests/Docs/FakeClockExampleTests.cs, region \"fake clock\" -->\n```csharp\n", "```");

        Normalize(block).Should().Be(Normalize(region), "docs/testing.md must show the example exactly as it is compiled and run");
    }

    private static string Between(string text, string start, string end)
    {
        text = text.Replace("\r\n", "\n", StringComparison.Ordinal);
        int from = text.IndexOf(start, StringComparison.Ordinal);
        from.Should().BeGreaterThanOrEqualTo(0, $"the marker '{start.Trim()}' is there");
        from += start.Length;
        int to = text.IndexOf(end, from, StringComparison.Ordinal);
        to.Should().BeGreaterThan(from, $"the marker '{end.Trim()}' follows");
        return text[from..to];
    }

    /// <summary>Lines without their common indentation and trailing blanks.</summary>
    private static string Normalize(string code)
    {
        string[] lines = code.TrimEnd().Split('\n');
        int indent = lines.Where(l => l.Trim().Length > 0).Min(l => l.Length - l.TrimStart().Length);
        return string.Join('\n', lines.Select(l => l.Trim().Length == 0 ? "" : l[indent..].TrimEnd()));
    }

    private static string RepositoryRoot()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName ?? throw new InvalidOperationException($"No PriorityAsync.sln above {AppContext.BaseDirectory}.");
    }
}
