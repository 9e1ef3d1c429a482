using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;

namespace Snippets;

/// <summary>
/// One markdown file's snippet blocks: <c>&lt;!-- snippet: NAME --&gt;</c>, then anything, then <c>&lt;!-- endSnippet --&gt;</c>.
/// <see cref="Update"/> renders each block from its source; every C#, XML or JSON fence outside such a block is a problem, since
/// nothing compiles it.
/// </summary>
internal static partial class MarkdownFile
{
    /// <summary>The fence languages that must come from a snippet.</summary>
    public static readonly string[] CompiledLanguages = ["csharp", "cs", "c#", "xml", "json"];

    /// <summary>The file's text with every snippet block rendered from <paramref name="snippets"/>; problems are added to <paramref name="problems"/>.</summary>
    public static string Update(string root, string relativePath, string text, IReadOnlyDictionary<string, Snippet> snippets, List<string> problems)
    {
        string[] lines = text.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        var output = new StringBuilder();
        string? fence = null;
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i];
            Match start = SnippetStart().Match(line);
            if (fence is null && start.Success)
            {
                string name = start.Groups["name"].Value;
                int end = Array.FindIndex(lines, i + 1, l => SnippetEnd().IsMatch(l));
                if (end < 0)
                {
                    problems.Add($"{relativePath}:{i + 1}: snippet '{name}' has no <!-- endSnippet --> after it.");
                    output.Append(line).Append('\n');
                    continue;
                }

                Snippet? snippet = name.Contains('/', StringComparison.Ordinal)
                    ? SnippetSources.WholeFile(root, name)
                    : snippets.GetValueOrDefault(name);
                if (snippet is null)
                {
                    problems.Add($"{relativePath}:{i + 1}: snippet '{name}' is not defined (no '// begin-snippet: {name}' in {string.Join(", ", SnippetSources.Folders)}, and no such file).");
                    for (int j = i; j <= end; j++)
                    {
                        output.Append(lines[j]).Append('\n');
                    }
                }
                else
                {
                    output.Append(Render(snippet, line));
                }

                i = end;
                continue;
            }

            Match open = Fence().Match(line);
            if (fence is null && open.Success)
            {
                fence = open.Groups["fence"].Value;
                string language = open.Groups["language"].Value.Trim().ToLowerInvariant();
                if (CompiledLanguages.Contains(language))
                {
                    problems.Add($"{relativePath}:{i + 1}: a {language} block that nothing compiles: make it a snippet of a compiled file (tools/Snippets/README.md).");
                }
            }
            else if (fence is not null && line.TrimStart().StartsWith(fence, StringComparison.Ordinal) && line.Trim().Trim('`').Length == 0)
            {
                fence = null;
            }

            output.Append(line);
            if (i < lines.Length - 1)
            {
                output.Append('\n');
            }
        }

        return output.ToString();
    }

    /// <summary>Every <c>--project PATH</c> in the file's text that names no project under <paramref name="root"/>.</summary>
    public static IEnumerable<string> MissingProjects(string root, string relativePath, string text)
    {
        string[] lines = text.Split('\n');
        for (int i = 0; i < lines.Length; i++)
        {
            foreach (Match match in ProjectOption().Matches(lines[i]))
            {
                string path = Path.Combine(root, match.Groups["path"].Value.TrimEnd('/', '`', ')', ','));
                bool exists = path.EndsWith(".csproj", StringComparison.OrdinalIgnoreCase)
                    ? File.Exists(path)
                    : Directory.Exists(path) && Directory.EnumerateFiles(path, "*.csproj").Any();
                if (!exists)
                {
                    yield return $"{relativePath}:{i + 1}: '--project {match.Groups["path"].Value}' names no project (paths are from the repository root).";
                }
            }
        }
    }

    private static string Render(Snippet snippet, string startLine)
    {
        string fence = snippet.Text.Contains("```", StringComparison.Ordinal) ? "````" : "```";
        return new StringBuilder()
            .Append(startLine).Append('\n')
            .Append(fence).Append(snippet.Language).Append('\n')
            .Append(snippet.Text).Append('\n')
            .Append(fence).Append('\n')
            .Append("<!-- endSnippet -->").Append('\n')
            .ToString();
    }

    [GeneratedRegex(@"^<!--\s*snippet:\s*(?<name>[A-Za-z0-9._/-]+)\s*-->\s*$")]
    private static partial Regex SnippetStart();

    [GeneratedRegex(@"^<!--\s*endSnippet\s*-->\s*$")]
    private static partial Regex SnippetEnd();

    [GeneratedRegex(@"^\s*(?<fence>`{3,})(?<language>[^`]*)$")]
    private static partial Regex Fence();

    [GeneratedRegex(@"--project\s+(?<path>[A-Za-z0-9._/-]+)")]
    private static partial Regex ProjectOption();
}
