using System.Globalization;
using System.IO;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using Snippets;

namespace Docs.Tests;

/// <summary>
/// The README's install lines, as a new user runs them: in a fresh folder with an empty NuGet cache, from a clone of this
/// repository, then the README's example pasted into the new project and run; then the project as a colleague or CI gets it (its
/// folder without bin and obj, another empty cache) restores and builds again, with no option of the first session remembered.
/// </summary>
[Collection(PackCollection.Name)]
public sealed partial class InstallTests : IDisposable
{
    private readonly string _root = Repository.FindRoot(AppContext.BaseDirectory);
    private readonly string _scratch = Directory.CreateTempSubdirectory("priorityasync-install-").FullName;

    [Fact]
    public async Task ReadmeInstallLines_FreshFolderAndEmptyCache_RunTheExampleAndRestoreAgainFromClean()
    {
        string readme = File.ReadAllText(Path.Combine(_root, "README.md")).ReplaceLineEndings("\n");
        IReadOnlyList<string> lines = InstallLines(readme);
        string clone = lines[0];
        string repositoryUrl = XElement.Load(Path.Combine(_root, "Directory.Build.props")).Descendants("RepositoryUrl").Single().Value;
        clone.Should().StartWith($"git clone {repositoryUrl}.git ", "the clone line names the repository's public URL");

        // The clone comes from this repository (no network here); every other line runs as written.
        string work = Path.Combine(_scratch, "work");
        Directory.CreateDirectory(work);
        string script = string.Join("\n", lines.Skip(1).Prepend(clone.Replace($"{repositoryUrl}.git", Quote(_root), StringComparison.Ordinal)));
        await Processes.RunAsync(work, EmptyCache("first"), "bash", "-euo", "pipefail", "-c", script);

        string app = Path.Combine(work, "MyApp");
        string config = File.ReadAllText(Path.Combine(app, "nuget.config"));
        config.Should().Contain("<add key=\"priorityasync\" value=\"packages\" />", "the folder is kept, relative to the config")
            .And.NotContain("://", "the config adds a folder to the machine's sources and names no registry");
        File.ReadAllText(Path.Combine(app, "MyApp.csproj")).Should().MatchRegex("<PackageReference Include=\"PriorityAsync\" Version=\"0\\.[^\"]+\" />");

        // The README's example as pasted, alone: the block is the whole Program.cs.
        File.WriteAllText(Path.Combine(app, "Program.cs"), QuickstartBlock(readme));
        string output = await Processes.RunAsync(app, EmptyCache("first"), "dotnet", "run");
        // The README's line, each of the 5 messages completed or lost once. Its "0 lost" is a wall-clock outcome (SampleTests says
        // why), proven on virtual time in tests/LeaseWorker.Tests; here the install is what is tested.
        Match printed = Regex.Match(output, @"(\d+) messages completed, (\d+) lost\n$");
        printed.Success.Should().BeTrue($"the example prints the README's line; it printed: {output}");
        (int.Parse(printed.Groups[1].Value, CultureInfo.InvariantCulture) + int.Parse(printed.Groups[2].Value, CultureInfo.InvariantCulture))
            .Should().Be(5, "each of the 5 messages is completed or lost, once");

        // A colleague's checkout of MyApp, or CI's: no bin, no obj, an empty cache, nothing but the files.
        string colleague = Path.Combine(_scratch, "colleague");
        CopyWithoutBuildOutput(app, colleague);
        await Processes.RunAsync(colleague, EmptyCache("colleague"), "dotnet", "build");
        Directory.Exists(Path.Combine(_scratch, "colleague-cache", "priorityasync")).Should().BeTrue("the restore found the package again");
    }

    [Fact]
    public void Readme_UntilPublished_SaysSoAndMarksTheRegistryLine()
    {
        string readme = File.ReadAllText(Path.Combine(_root, "README.md")).ReplaceLineEndings("\n");

        readme.Should().MatchRegex(@"not published on a package registry yet", "until it is, the README says so")
            .And.MatchRegex(@"Once PriorityAsync is published \(not yet\), this line alone will do: `dotnet add package PriorityAsync --prerelease`");
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_scratch, recursive: true);
        }
        catch (IOException)
        {
            // A build server may still hold a file for a moment: what is left is in a temporary folder.
        }
    }

    // The bash block after the install marker, one command a line (comments after a command stay: bash reads them as comments).
    private static IReadOnlyList<string> InstallLines(string readme)
    {
        Match block = InstallBlock().Match(readme);
        block.Success.Should().BeTrue("the README has a ```bash block of install lines after its '<!-- install: from a clone' marker");
        return block.Groups["lines"].Value.Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }

    // The README's example, as the markdown shows it (a user copies the block, not the sample's file).
    private static string QuickstartBlock(string readme)
    {
        Match block = QuickstartSnippet().Match(readme);
        block.Success.Should().BeTrue("the README shows the quickstart snippet");
        return block.Groups["code"].Value;
    }

    // Each session its own empty global packages folder, as on a machine that never restored anything. The machine's HTTP cache
    // stays: it only spares downloads of the registry's packages, and a folder source (the install's) never goes through it.
    private Dictionary<string, string?> EmptyCache(string who) => new()
    {
        ["NUGET_PACKAGES"] = Path.Combine(_scratch, $"{who}-cache"),
    };

    private static void CopyWithoutBuildOutput(string from, string to)
    {
        foreach (string file in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories))
        {
            string relative = Path.GetRelativePath(from, file);
            if (relative.Split(Path.DirectorySeparatorChar)[0] is "bin" or "obj")
            {
                continue;
            }

            Directory.CreateDirectory(Path.GetDirectoryName(Path.Combine(to, relative))!);
            File.Copy(file, Path.Combine(to, relative));
        }
    }

    private static string Quote(string path) => "'" + path.Replace("'", "'\\''", StringComparison.Ordinal) + "'";

    [GeneratedRegex(@"<!-- install: from a clone[^\n]*-->\n```bash\n(?<lines>.*?)\n```", RegexOptions.Singleline)]
    private static partial Regex InstallBlock();

    [GeneratedRegex(@"<!-- snippet: quickstart -->\n```csharp\n(?<code>.*?\n)```", RegexOptions.Singleline)]
    private static partial Regex QuickstartSnippet();
}
