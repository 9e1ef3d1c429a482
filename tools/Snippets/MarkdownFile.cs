using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;

namespace Snippets;

/// <summary>
/// One markdown file's snippet blocks: <c>&lt;!-- snippet: NAME --&gt;</c>, then anything, then <c>&lt;!-- endSnippet --&gt;</c>.
/// <see cref="Update"/> renders each block from its source; every code block outside such a block that holds C#, XML or JSON is a
/// problem, since nothing compiles it; and a C# snippet must keep the paste rule (<see cref="PasteCheck"/>). A code block outside a
/// snippet block is C#, XML or JSON when it is: a fence (<c>```</c> or <c>~~~</c>) whose info string starts with one of
/// <see cref="CompiledLanguages"/> (<c>csharp title="x"</c> counts), and a fence without a language or an indented code block whose
/// lines look like C# (<see cref="LooksLikeCSharp"/>).
/// </summary>
internal static partial class MarkdownFile
{
    /// <summary>The fence languages that must come from a snippet.</summary>
    public static readonly string[] CompiledLanguages = ["csharp", "cs", "c#", "csx", "xml", "json"];

    /// <summary>The file's text with every snippet block rendered from <paramref name="snippets"/>; problems are added to <paramref name="problems"/>.</summary>
    public static string Update(string root, string relativePath, string text, IReadOnlyDictionary<string, Snippet> snippets, List<string> problems)
    {
        string[] lines = text.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        var output = new StringBuilder();
        var blocks = new CodeBlocks(relativePath, problems);
        for (int i = 0; i < lines.Length; i++)
        {
            string line = lines[i];
            Match start = SnippetStart().Match(line);
            if (!blocks.InFence && start.Success)
            {
                blocks.Interrupt();
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
                    if (snippet.Language == "csharp" && PasteCheck.Check(root, $"{relativePath}:{i + 1}", snippet.Text) is { } paste)
                    {
                        problems.Add(paste);
                    }
                }

                i = end;
                continue;
            }

            blocks.Read(line, i);
            output.Append(line);
            if (i < lines.Length - 1)
            {
                output.Append('\n');
            }
        }

        blocks.Interrupt();
        return output.ToString();
    }

    /// <summary>
    /// Whether the lines of a block without a language look like C#: one of them (a trailing <c>//</c> comment aside) is a
    /// <c>using</c> or <c>namespace</c> directive, or a statement: a call (<c>Name(...);</c>), an assignment or declaration
    /// (<c>x = ...;</c>, <c>var x = ...;</c>), or a line that starts with a C# keyword and ends with <c>;</c>. Output, shell commands and
    /// prose do not; a block of another language that does (SQL, for one) says its language in the fence.
    /// </summary>
    public static bool LooksLikeCSharp(IEnumerable<string> lines) => lines.Any(line =>
    {
        string code = TrailingComment().Replace(line, string.Empty).Trim();
        return Directive().IsMatch(code)
            || Call().IsMatch(code)
            || Assignment().IsMatch(code)
            || (code.EndsWith(';') && Keyword().IsMatch(code));
    });

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

    [GeneratedRegex(@"^(?<indent>\s*)(?<fence>`{3,}(?=[^`]*$)|~{3,})(?<info>.*)$")]
    private static partial Regex Fence();

    [GeneratedRegex(@"^(?<indent> {0,3})(?<marker>[*+-]|\d{1,9}[.)])(?<space> {1,4}|$)")]
    private static partial Regex ListItem();

    [GeneratedRegex(@"\s//.*$|^//.*$")]
    private static partial Regex TrailingComment();

    [GeneratedRegex(@"^(using\s+(static\s+)?[\w.]+(\s*=\s*[\w.<>]+)?\s*;|namespace\s+[\w.]+\s*[;{]?)$")]
    private static partial Regex Directive();

    [GeneratedRegex(@"[\w>\]]\(.*\);$")]
    private static partial Regex Call();

    [GeneratedRegex(@"^[A-Za-z_][\w.<>\[\]?]*(\s+[A-Za-z_]\w*)?\s*[-+*/?]?=\s*[^=\s].*;$")]
    private static partial Regex Assignment();

    [GeneratedRegex(@"^(var|await|return|throw|using|new|public|private|protected|internal|static|readonly|const|int|string|bool|void|class|record|struct|interface)\b")]
    private static partial Regex Keyword();

    [GeneratedRegex(@"--project\s+(?<path>[A-Za-z0-9._/-]+)")]
    private static partial Regex ProjectOption();

    /// <summary>
    /// Finds the code blocks of a markdown file line by line, as CommonMark does for what matters here, and reports each one that holds
    /// C#, XML or JSON. A fence runs from <c>```</c> or <c>~~~</c> to a line of at least as many of the same character (or the end of
    /// the file). An indented code block is a run of lines indented by 4 spaces more than the list item they are in (none: 4), after a
    /// blank line or the start of the file; a paragraph's indented continuation line is none.
    /// </summary>
    private sealed class CodeBlocks(string relativePath, List<string> problems)
    {
        private readonly List<string> _block = [];
        private char _fenceChar;
        private int _fenceLength;
        private string? _language;
        private int _blockStart = -1;
        private bool _indentedBlock;
        private bool _afterBlank = true;
        private int _listContentIndent = -1;

        public bool InFence => _fenceLength > 0;

        /// <summary>Reads one line outside a snippet block.</summary>
        public void Read(string line, int index)
        {
            if (InFence)
            {
                string trimmed = line.Trim();
                if (trimmed.Length >= _fenceLength && trimmed.All(c => c == _fenceChar))
                {
                    Close();
                    _afterBlank = false;
                }
                else
                {
                    _block.Add(line);
                }

                return;
            }

            bool blank = string.IsNullOrWhiteSpace(line);
            int indent = Indent(line);
            if (_indentedBlock)
            {
                if (blank || indent >= CodeIndent)
                {
                    _block.Add(line);
                    return;
                }

                Close();
            }

            Match fence = Fence().Match(line);
            if (fence.Success && fence.Groups["indent"].Length < CodeIndent)
            {
                _fenceChar = fence.Groups["fence"].Value[0];
                _fenceLength = fence.Groups["fence"].Length;
                _language = fence.Groups["info"].Value.Trim().Split(' ', '\t', '{')[0].ToLowerInvariant();
                _blockStart = index;
                return;
            }

            if (!blank && indent >= CodeIndent && _afterBlank)
            {
                _indentedBlock = true;
                _language = string.Empty;
                _blockStart = index;
                _block.Add(line);
                return;
            }

            Match item = ListItem().Match(line);
            if (item.Success)
            {
                _listContentIndent = item.Groups["indent"].Length + item.Groups["marker"].Length + Math.Max(1, item.Groups["space"].Length);
            }
            else if (!blank && indent == 0)
            {
                _listContentIndent = -1; // a paragraph at the margin ends the list
            }

            _afterBlank = blank;
        }

        /// <summary>Ends an open block: at a snippet marker, or at the end of the file.</summary>
        public void Interrupt()
        {
            if (InFence || _indentedBlock)
            {
                Close();
            }

            _afterBlank = true;
        }

        private int CodeIndent => (_listContentIndent < 0 ? 0 : _listContentIndent) + 4;

        private static int Indent(string line)
        {
            int columns = 0;
            foreach (char c in line)
            {
                if (c == ' ')
                {
                    columns++;
                }
                else if (c == '\t')
                {
                    columns += 4 - (columns % 4);
                }
                else
                {
                    break;
                }
            }

            return columns;
        }

        private void Close()
        {
            string where = $"{relativePath}:{_blockStart + 1}";
            if (CompiledLanguages.Contains(_language))
            {
                problems.Add($"{where}: a {_language} block that nothing compiles: make it a snippet of a compiled file (tools/Snippets/README.md).");
            }
            else if (_language!.Length == 0 && LooksLikeCSharp(_block))
            {
                string kind = _indentedBlock ? "an indented code block" : "a code block without a language";
                problems.Add($"{where}: {kind} that looks like C# and that nothing compiles: make it a snippet of a compiled file " +
                    "(tools/Snippets/README.md), or name its language in a fence if it is not C#.");
            }

            _block.Clear();
            _fenceLength = 0;
            _indentedBlock = false;
            _language = null;
        }
    }
}
