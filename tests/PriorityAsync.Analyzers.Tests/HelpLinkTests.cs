using System.IO;
using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>Each rule links to its own section of docs/analyzers.md in the repository that Directory.Build.props names.</summary>
public sealed partial class HelpLinkTests
{
    [Fact]
    public void EveryRule_HelpLink_IsItsSectionOfTheAnalyzersPage()
    {
        string root = RepositoryRoot();
        string repositoryUrl = XElement.Load(Path.Combine(root, "Directory.Build.props")).Descendants("RepositoryUrl").Single().Value;
        Dictionary<string, string> sections = File.ReadLines(Path.Combine(root, "docs", "analyzers.md"))
            .Select(line => RuleHeading().Match(line))
            .Where(match => match.Success)
            .ToDictionary(match => match.Groups["id"].Value, match => GitHubAnchor(match.Groups["heading"].Value));

        var rules = new PriorityLoopAnalyzer().SupportedDiagnostics;

        rules.Select(rule => rule.Id).Should().BeEquivalentTo(sections.Keys, "every rule has a section, and every section a rule");
        foreach (var rule in rules)
        {
            rule.HelpLinkUri.Should().Be($"{repositoryUrl}/blob/main/docs/analyzers.md#{sections[rule.Id]}", rule.Id);
        }
    }

    [Theory]
    [InlineData("PA0004: Static Priority members after ConfigureAwait(false)", "pa0004-static-priority-members-after-configureawaitfalse")]
    [InlineData("PA0001: Pool timers on the loop", "pa0001-pool-timers-on-the-loop")]
    public void GitHubAnchor_Heading_IsWhatGitHubLinksTo(string heading, string anchor) => GitHubAnchor(heading).Should().Be(anchor);

    // GitHub's anchor for a heading: lower case, punctuation other than '-' and '_' dropped, each space a '-'.
    private static string GitHubAnchor(string heading) =>
        new string(heading.ToLowerInvariant().Where(c => char.IsLetterOrDigit(c) || c is ' ' or '-' or '_').ToArray()).Replace(' ', '-');

    private static string RepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No PriorityAsync.sln above {AppContext.BaseDirectory}.");
    }

    [GeneratedRegex(@"^## (?<heading>(?<id>PA\d{4}): .*)$")]
    private static partial Regex RuleHeading();
}
