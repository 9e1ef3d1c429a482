using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace Snippets;

/// <summary>The markdown files whose code is checked, and the check itself, shared by the tool and the test.</summary>
internal static class Repository
{
    /// <summary>The repository root: the nearest folder above <paramref name="start"/> that holds PriorityAsync.sln.</summary>
    public static string FindRoot(string start)
    {
        for (DirectoryInfo? folder = new(start); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "PriorityAsync.sln")))
            {
                return folder.FullName;
            }
        }

        throw new DirectoryNotFoundException($"No PriorityAsync.sln in '{start}' or any folder above it.");
    }

    /// <summary>The files whose C#, XML and JSON blocks must be snippets: README.md, src/*/PACKAGE.md, docs/*.md, samples/*/README.md.</summary>
    public static IReadOnlyList<string> SnippetDocuments(string root) =>
        new[] { "README.md" }
            .Concat(Directory.EnumerateFiles(Path.Combine(root, "src"), "PACKAGE.md", SearchOption.AllDirectories).Select(f => Path.GetRelativePath(root, f)))
            .Concat(Directory.EnumerateFiles(Path.Combine(root, "docs"), "*.md").Select(f => Path.GetRelativePath(root, f)))
            .Concat(Directory.Exists(Path.Combine(root, "samples"))
                ? Directory.EnumerateDirectories(Path.Combine(root, "samples")).Select(d => Path.Combine(d, "README.md")).Where(File.Exists).Select(f => Path.GetRelativePath(root, f))
                : [])
            .Select(f => f.Replace('\\', '/'))
            .Where(f => !IsBuildOutput(f))
            .Order(StringComparer.Ordinal)
            .ToList();

    /// <summary>Every markdown file of the repository (for the <c>--project</c> check), outside bin, obj and artifacts.</summary>
    public static IReadOnlyList<string> AllDocuments(string root) =>
        Directory.EnumerateFiles(root, "*.md", SearchOption.AllDirectories)
            .Select(f => Path.GetRelativePath(root, f).Replace('\\', '/'))
            .Where(f => !IsBuildOutput(f) && !f.StartsWith('.'))
            .Order(StringComparer.Ordinal)
            .ToList();

    /// <summary>
    /// Renders every snippet document from the sources. Returns the documents whose text changed (path from the root, new text) and
    /// fills <paramref name="problems"/> with what no rendering can mend (unknown snippets, uncompiled blocks, missing projects).
    /// </summary>
    public static IReadOnlyList<(string Path, string Text)> Render(string root, List<string> problems)
    {
        Dictionary<string, Snippet> snippets = SnippetSources.Read(root, problems);
        var changed = new List<(string, string)>();
        foreach (string document in SnippetDocuments(root))
        {
            string text = File.ReadAllText(Path.Combine(root, document));
            string rendered = MarkdownFile.Update(root, document, text, snippets, problems);
            if (!string.Equals(rendered, text.Replace("\r\n", "\n", StringComparison.Ordinal), StringComparison.Ordinal))
            {
                changed.Add((document, rendered));
            }
        }

        foreach (string document in AllDocuments(root))
        {
            problems.AddRange(MarkdownFile.MissingProjects(root, document, File.ReadAllText(Path.Combine(root, document))));
        }

        return changed;
    }

    private static bool IsBuildOutput(string path) =>
        path.Split('/').Any(part => part is "bin" or "obj" or "artifacts" or "TestResults" or "BenchmarkDotNet.Artifacts" or "node_modules");
}
