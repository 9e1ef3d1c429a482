using System;
using System.IO;
using System.Text;

namespace Samples.Support;

/// <summary>Text the samples print for people: paragraphs wrapped to a terminal of <see cref="Width"/> columns.</summary>
public static class Paragraph
{
    /// <summary>The widest line a sample prints by default.</summary>
    public const int Width = 120;

    /// <summary>
    /// Writes <paramref name="text"/> in lines of at most <see cref="Width"/> characters, broken at spaces: the first line starts with
    /// <paramref name="indent"/>, the others with <paramref name="continuation"/> (default: the same indent). A single word longer
    /// than a line is not broken.
    /// </summary>
    public static void Write(TextWriter output, string text, string indent = "", string? continuation = null)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(text);
        continuation ??= indent;
        var line = new StringBuilder(indent);
        bool empty = true;
        foreach (string word in text.Split(' '))
        {
            if (!empty && line.Length + 1 + word.Length > Width)
            {
                output.WriteLine(line.ToString());
                line.Clear().Append(continuation);
                empty = true;
            }

            if (!empty)
            {
                line.Append(' ');
            }

            line.Append(word);
            empty = false;
        }

        output.WriteLine(line.ToString());
    }
}
