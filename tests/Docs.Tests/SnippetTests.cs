using System.IO;
using Snippets;

namespace Docs.Tests;

/// <summary>
/// Every C#, XML and JSON block of README.md, src/*/PACKAGE.md, docs/*.md and samples/*/README.md is a copy of compiled code
/// (tools/Snippets), and the copy is current; the engine's own rules are checked on a scratch repository.
/// </summary>
public sealed class SnippetTests : IDisposable
{
    private readonly string _scratch = Directory.CreateTempSubdirectory("priorityasync-snippets-").FullName;

    [Fact]
    public void Docs_EveryCodeBlock_IsTheCurrentCopyOfItsCompiledSnippet()
    {
        string root = Repository.FindRoot(AppContext.BaseDirectory);
        var problems = new List<string>();

        IReadOnlyList<(string Path, string Text)> stale = Repository.Render(root, problems);

        problems.AddRange(stale.Select(s => $"{s.Path}: a snippet block differs from its source; run 'dotnet run --project tools/Snippets' to copy the code in."));
        problems.Should().BeEmpty();
        Repository.SnippetDocuments(root).Should().Contain(["README.md", "src/PriorityAsync/PACKAGE.md", "src/PriorityAsync.Hosting/PACKAGE.md", "docs/hosting.md",
            "samples/MessageBus.Postgres/README.md", "samples/SyncOverAsync/README.md"]);
    }

    [Fact]
    public void Docs_PackageReferences_PinNoVersion()
    {
        string root = Repository.FindRoot(AppContext.BaseDirectory);

        IEnumerable<string> pinned = Repository.AllDocuments(root)
            .SelectMany(document => File.ReadAllLines(Path.Combine(root, document)).Select((line, i) => (document, line, i)))
            .Where(l => l.line.Contains("<PackageReference Include=\"PriorityAsync", StringComparison.Ordinal) && l.line.Contains("Version=\"", StringComparison.Ordinal))
            .Select(l => $"{l.document}:{l.i + 1}: {l.line.Trim()}");

        pinned.Should().BeEmpty("every commit packs its own version: the docs say 'dotnet add package', never a number that goes stale");
    }

    [Fact]
    public async Task Docs_AddPackageCommands_NameNoVersionAndTakePreReleasesUntilAReleaseIsTagged()
    {
        string root = Repository.FindRoot(AppContext.BaseDirectory);
        // Before the first release tag every package is a pre-release, which `dotnet add package` finds only with --prerelease.
        bool released = (await Processes.RunAsync(root, "git", "tag", "--list", "v*")).Trim().Length > 0;

        var commands = Repository.AllDocuments(root)
            .SelectMany(document => File.ReadAllLines(Path.Combine(root, document)).Select((line, i) => (document, line, i)))
            .Where(l => l.line.Contains("dotnet add package PriorityAsync", StringComparison.Ordinal))
            .Select(l => (Where: $"{l.document}:{l.i + 1}: {l.line.Trim()}", l.line))
            .ToList();

        commands.Should().NotBeEmpty();
        commands.Where(c => c.line.Contains("--version", StringComparison.Ordinal) || c.line.Contains(" -v ", StringComparison.Ordinal))
            .Select(c => c.Where).Should().BeEmpty("every commit packs its own version: a number in the docs goes stale");
        if (!released)
        {
            commands.Where(c => !c.line.Contains("--prerelease", StringComparison.Ordinal)).Select(c => c.Where)
                .Should().BeEmpty("no release is tagged yet: without --prerelease the command finds no version");
        }
    }

    [Fact]
    public void Render_SourceChangedAfterCopy_ReportsTheDocumentAsStaleAndRewritesIt()
    {
        Write("samples/A/Code.cs", "class A\n{\n    void M()\n    {\n        // begin-snippet: m\n        Console.WriteLine(1);\n        // end-snippet\n    }\n}\n");
        Write("README.md", "# A\n\n<!-- snippet: m -->\n```csharp\nConsole.WriteLine(0);\n```\n<!-- endSnippet -->\n");
        var problems = new List<string>();

        IReadOnlyList<(string Path, string Text)> stale = Repository.Render(_scratch, problems);

        problems.Should().BeEmpty();
        stale.Should().ContainSingle().Which.Should().Be(("README.md", "# A\n\n<!-- snippet: m -->\n```csharp\nConsole.WriteLine(1);\n```\n<!-- endSnippet -->\n"));
    }

    [Fact]
    public void Render_CSharpBlockThatIsNoWholeProgramAndHasNoNeedsLine_IsAProblem()
    {
        Write("samples/A/Code.cs", "// begin-snippet: fragment\nawait context.Prioritize(2);\n// end-snippet\n" +
            "// begin-snippet: program\nusing PriorityAsync;\n\nPriorityContext.Run(async () => await Priority.Prioritize(1));\n// end-snippet\n");
        Write("README.md", "<!-- snippet: fragment -->\n<!-- endSnippet -->\n\n<!-- snippet: program -->\n<!-- endSnippet -->\n");
        var problems = new List<string>();

        Repository.Render(_scratch, problems);

        problems.Should().ContainSingle().Which.Should().Match(
            "README.md:1: a C# block that does not compile as pasted into `dotnet new console` (CS0103 at Program.cs:1 The name 'context' *): " +
            "make it a whole program, or start it with one line '// Needs: ...'*", "the whole program, with the PriorityAsync package, compiles");
    }

    [Fact]
    public void Render_NeedsLine_MakesAFragmentNoProblemAndCompilesTheFilesItNames()
    {
        Write("samples/A/Code.cs", "// begin-snippet: fragment\n// Needs: a PriorityContext named context, in an async method.\nawait context.Prioritize(2);\n// end-snippet\n" +
            "// begin-snippet: beside\n// Needs: samples/A/Helper.cs beside it.\nHelper.Go();\n// end-snippet\n" +
            "// begin-snippet: wrong\n// Needs: samples/A/Helper.cs beside it.\nHelper.Stop();\n// end-snippet\n");
        Write("samples/A/Helper.cs", "static class Helper\n{\n    public static void Go() { }\n}\n");
        Write("README.md", "<!-- snippet: fragment -->\n<!-- endSnippet -->\n<!-- snippet: beside -->\n<!-- endSnippet -->\n<!-- snippet: wrong -->\n<!-- endSnippet -->\n");
        var problems = new List<string>();

        Repository.Render(_scratch, problems);

        problems.Should().ContainSingle("a fragment says what it needs, and a program compiles with the files it names")
            .Which.Should().Match("README.md:5: a C# block that does not compile as pasted * (CS0117 at Program.cs:2 'Helper' does not contain a definition for 'Stop')*");
    }

    [Fact]
    public void Render_NestedRegionsAndWholeFiles_LeaveOutMarkersAndDedent()
    {
        Write("samples/A/Code.cs", "// begin-snippet: outer\nusing System;\n// begin-snippet: inner\n    Console.WriteLine();\n        Console.WriteLine();\n// end-snippet\n// end-snippet\n");
        Write("samples/A/settings.json", "{ \"a\": 1 }\n");
        Write("README.md", "<!-- snippet: outer -->\n<!-- endSnippet -->\n<!-- snippet: inner -->\n<!-- endSnippet -->\n<!-- snippet: samples/A/settings.json -->\n<!-- endSnippet -->\n");
        var problems = new List<string>();

        string text = Repository.Render(_scratch, problems).Single().Text;

        problems.Should().BeEmpty();
        text.Should().Be(
            "<!-- snippet: outer -->\n```csharp\nusing System;\n    Console.WriteLine();\n        Console.WriteLine();\n```\n<!-- endSnippet -->\n" +
            "<!-- snippet: inner -->\n```csharp\nConsole.WriteLine();\n    Console.WriteLine();\n```\n<!-- endSnippet -->\n" +
            "<!-- snippet: samples/A/settings.json -->\n```json\n{ \"a\": 1 }\n```\n<!-- endSnippet -->\n");
    }

    [Fact]
    public void Render_UncompiledBlockUnknownSnippetOrMissingProject_IsAProblem()
    {
        Write("samples/A/A.csproj", "<Project />\n");
        Write("docs/guide.md",
            "```csharp\nvar x = Undeclared;\n```\n\n```bash\ndotnet run --project samples/A\ndotnet run --project samples/Gone\n```\n\n<!-- snippet: nowhere -->\n<!-- endSnippet -->\n");
        Write("README.md", "# A\n");
        var problems = new List<string>();

        Repository.Render(_scratch, problems);

        problems.Should().HaveCount(3);
        problems.Should().ContainMatch("docs/guide.md:1: a csharp block that nothing compiles*");
        problems.Should().ContainMatch("docs/guide.md:7: '--project samples/Gone' names no project*");
        problems.Should().ContainMatch("docs/guide.md:10: snippet 'nowhere' is not defined*");
    }

    [Fact]
    public void Render_CSharpInATildeFenceWithAnInfoStringIndentedOrUnlabelled_IsAProblem()
    {
        Write("samples/A/README.md",
            "~~~csharp\nvar a = 1;\n~~~\n\n" +
            "```csharp title=\"Program.cs\"\nvar b = 2;\n```\n\n" +
            "Text:\n\n    var c = Compute(3);\n    c++;\n\n" +
            "```\nConsole.WriteLine(\"d\");\n```\n\n" +
            "* a step:\n\n      using System;\n");
        Write("README.md", "# A\n");
        var problems = new List<string>();

        Repository.Render(_scratch, problems);

        problems.Should().HaveCount(5);
        problems.Should().ContainMatch("samples/A/README.md:1: a csharp block that nothing compiles*");
        problems.Should().ContainMatch("samples/A/README.md:5: a csharp block that nothing compiles*");
        problems.Should().ContainMatch("samples/A/README.md:11: an indented code block that looks like C#*");
        problems.Should().ContainMatch("samples/A/README.md:14: a code block without a language that looks like C#*");
        problems.Should().ContainMatch("samples/A/README.md:20: an indented code block that looks like C#*");
    }

    [Fact]
    public void Render_OutputOtherLanguagesListTextAndContinuationLines_AreNoProblem()
    {
        Write("docs/guide.md",
            "```\nserved 3 requests; the loop ended: yes (2 of 3 ran);\n```\n\n" +
            "```sql\nSELECT count(*) FROM queue;\n```\n\n" +
            "~~~bash\ndotnet run --project samples/A;\n~~~\n\n" +
            "* a step:\n\n    then call Run();\n\n" +
            "A paragraph\n    x = Run();\n\n" +
            "```csharp\n");
        Write("samples/A/A.csproj", "<Project />\n");
        Write("README.md", "<!-- snippet: samples/A/A.csproj -->\n<!-- endSnippet -->\n````markdown\n```csharp\nvar inside = 1;\n```\n````\n");
        var problems = new List<string>();

        Repository.Render(_scratch, problems);

        problems.Should().ContainSingle().Which.Should().Match("docs/guide.md:20: a csharp block that nothing compiles*", "an unclosed fence runs to the end of the file");
    }

    [Fact]
    public void Read_DuplicateOrUnclosedRegion_IsAProblem()
    {
        Write("samples/A/One.cs", "// begin-snippet: twice\n// end-snippet\n// begin-snippet: open\n");
        Write("samples/A/Two.cs", "// begin-snippet: twice\n// end-snippet\n");
        var problems = new List<string>();

        SnippetSources.Read(_scratch, problems);

        problems.Should().BeEquivalentTo(
            "samples/A/One.cs:3: snippet 'open' has no end-snippet.",
            "samples/A/Two.cs:1: snippet 'twice' is defined twice (also at samples/A/One.cs:1).");
    }

    public void Dispose() => Directory.Delete(_scratch, recursive: true);

    private void Write(string relativePath, string text)
    {
        string path = Path.Combine(_scratch, relativePath);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, text);
        if (!File.Exists(Path.Combine(_scratch, "PriorityAsync.sln")))
        {
            File.WriteAllText(Path.Combine(_scratch, "PriorityAsync.sln"), string.Empty);
            Directory.CreateDirectory(Path.Combine(_scratch, "src"));
            Directory.CreateDirectory(Path.Combine(_scratch, "docs"));
        }
    }
}
