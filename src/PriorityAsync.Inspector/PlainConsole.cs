using System.IO;
using Spectre.Console;

namespace PriorityAsync.Inspector;

/// <summary>
/// The console the tool writes to when standard output is not a terminal (a file, a pipe, CI's log): plain text, no colours, no
/// cursor movement or other control characters, and wide enough that a table keeps its values on one line (no terminal width to
/// fit: a wrapped "12.6 ms" is worse in a log than a long line).
/// </summary>
internal static class PlainConsole
{
    /// <summary>The widest a line may be; tables and panels take their natural width below it.</summary>
    public const int Width = 240;

    public static IAnsiConsole Create(TextWriter output)
    {
        IAnsiConsole console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
            Interactive = InteractionSupport.No,
            Out = new AnsiConsoleOutput(output),
        });
        console.Profile.Width = Width;
        console.Profile.Capabilities.Unicode = true;
        return console;
    }
}
