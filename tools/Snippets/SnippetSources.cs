using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;

namespace Snippets;

/// <summary>
/// Reads the snippet regions of the repository's source files: a line <c>// begin-snippet: NAME</c> (or
/// <c>&lt;!-- begin-snippet: NAME --&gt;</c>) opens one, <c>// end-snippet</c> closes the innermost open one. Regions nest; the
/// marker lines of nested regions are left out of the outer one's text.
/// </summary>
internal static partial class SnippetSources
{
    /// <summary>The folders whose files may define snippets; bin and obj below them are skipped.</summary>
    public static readonly string[] Folders = ["samples", "src", "tests", "docs", "tools"];

    private static readonly string[] s_extensions = [".cs", ".json", ".csproj", ".props", ".xml"];

    /// <summary>Every snippet defined under <see cref="Folders"/>; problems (unbalanced or duplicate markers) are added to <paramref name="problems"/>.</summary>
    public static Dictionary<string, Snippet> Read(string root, List<string> problems)
    {
        var snippets = new Dictionary<string, Snippet>(StringComparer.Ordinal);
        foreach (string folder in Folders)
        {
            string path = Path.Combine(root, folder);
            if (!Directory.Exists(path))
            {
                continue;
            }

            foreach (string file in Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories).Where(IsSource).Order(StringComparer.Ordinal))
            {
                ReadFile(root, file, snippets, problems);
            }
        }

        return snippets;
    }

    /// <summary>A whole file as a snippet (a snippet name with a '/'): its text with any marker lines left out, or null when there is no such file.</summary>
    public static Snippet? WholeFile(string root, string relativePath)
    {
        string file = Path.Combine(root, relativePath);
        if (!File.Exists(file))
        {
            return null;
        }

        string[] lines = ReadLines(file).Where(line => !IsMarker(line)).ToArray();
        return new Snippet(relativePath, Dedent(lines), Language(file), relativePath);
    }

    /// <summary>Removes the indentation common to every non-blank line and trailing blank lines; joins with '\n'. A preprocessor line
    /// (<c>#pragma</c>, <c>#if</c>), which C# code writes at the margin, does not count and stays at the margin.</summary>
    public static string Dedent(IReadOnlyList<string> lines)
    {
        int start = 0;
        int end = lines.Count;
        while (start < end && string.IsNullOrWhiteSpace(lines[start]))
        {
            start++;
        }

        while (end > start && string.IsNullOrWhiteSpace(lines[end - 1]))
        {
            end--;
        }

        int indent = int.MaxValue;
        for (int i = start; i < end; i++)
        {
            if (!string.IsNullOrWhiteSpace(lines[i]) && !IsPreprocessor(lines[i]))
            {
                indent = Math.Min(indent, lines[i].Length - lines[i].TrimStart(' ').Length);
            }
        }

        IEnumerable<string> body = lines.Skip(start).Take(end - start)
            .Select(line => string.IsNullOrWhiteSpace(line) ? string.Empty
                : IsPreprocessor(line) ? line.Trim()
                : line[Math.Min(indent, line.Length)..].TrimEnd());
        return string.Join('\n', body);
    }

    private static bool IsPreprocessor(string line) => line.TrimStart().StartsWith('#');

    private static bool IsSource(string file)
    {
        string separator = Path.DirectorySeparatorChar.ToString();
        return s_extensions.Contains(Path.GetExtension(file), StringComparer.OrdinalIgnoreCase)
            && !file.Contains($"{separator}bin{separator}", StringComparison.Ordinal)
            && !file.Contains($"{separator}obj{separator}", StringComparison.Ordinal);
    }

    private static void ReadFile(string root, string file, Dictionary<string, Snippet> snippets, List<string> problems)
    {
        string relative = Path.GetRelativePath(root, file).Replace('\\', '/');
        string[] lines = ReadLines(file);
        var open = new Stack<(string Name, int Line, bool Duplicate)>();
        var bodies = new Dictionary<string, List<string>>(StringComparer.Ordinal);
        for (int i = 0; i < lines.Length; i++)
        {
            Match begin = BeginMarker().Match(lines[i]);
            if (begin.Success)
            {
                string name = begin.Groups["name"].Value;
                if (bodies.ContainsKey(name) || snippets.ContainsKey(name))
                {
                    problems.Add($"{relative}:{i + 1}: snippet '{name}' is defined twice" +
                        (snippets.TryGetValue(name, out Snippet? other) ? $" (also at {other.Source})." : "."));
                    open.Push((name, i + 1, Duplicate: true));
                    continue;
                }

                open.Push((name, i + 1, Duplicate: false));
                bodies[name] = [];
                continue;
            }

            if (EndMarker().IsMatch(lines[i]))
            {
                if (open.Count == 0)
                {
                    problems.Add($"{relative}:{i + 1}: end-snippet without a begin-snippet.");
                    continue;
                }

                (string name, int line, bool duplicate) = open.Pop();
                if (!duplicate)
                {
                    snippets[name] = new Snippet(name, Dedent(bodies[name]), Language(file), $"{relative}:{line}");
                }

                continue;
            }

            foreach ((string name, _, bool duplicate) in open)
            {
                if (!duplicate)
                {
                    bodies[name].Add(lines[i]);
                }
            }
        }

        foreach ((string name, int line, _) in open)
        {
            problems.Add($"{relative}:{line}: snippet '{name}' has no end-snippet.");
        }
    }

    private static bool IsMarker(string line) => BeginMarker().IsMatch(line) || EndMarker().IsMatch(line);

    private static string[] ReadLines(string file) => File.ReadAllText(file).Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');

    private static string Language(string file) => Path.GetExtension(file).ToLowerInvariant() switch
    {
        ".cs" => "csharp",
        ".json" => "json",
        _ => "xml",
    };

    [GeneratedRegex(@"^\s*(//|<!--)\s*begin-snippet:\s*(?<name>[A-Za-z0-9._-]+)\s*(-->)?\s*$")]
    private static partial Regex BeginMarker();

    [GeneratedRegex(@"^\s*(//|<!--)\s*end-snippet\s*(-->)?\s*$")]
    private static partial Regex EndMarker();
}
