namespace Snippets;

/// <summary>A region of a compiled file that the docs quote: its text (dedented, marker lines removed) and where it comes from.</summary>
/// <param name="Name">The name after <c>begin-snippet:</c>, or the file's path from the repository root for a whole file.</param>
/// <param name="Text">The lines between the markers, without the markers of nested regions, dedented to the least-indented line.</param>
/// <param name="Language">The fence's language: csharp, json or xml, from the file's extension.</param>
/// <param name="Source">Where it is defined: the file from the repository root and the line of its begin marker.</param>
internal sealed record Snippet(string Name, string Text, string Language, string Source);
