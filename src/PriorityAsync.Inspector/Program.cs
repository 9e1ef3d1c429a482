using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Spectre.Console;

namespace PriorityAsync.Inspector;

/// <summary>The <c>prio</c> command (docs/inspector.md).</summary>
internal static class Program
{
    public static async Task<int> Main(string[] args)
    {
        using var cancel = new CancellationTokenSource();
        ConsoleCancelEventHandler onCancel = (_, e) =>
        {
            e.Cancel = true; // detach cleanly instead of dying with the session open
            cancel.Cancel();
        };
        Console.CancelKeyPress += onCancel;
        try
        {
            var terminal = new Terminal(Keys: !Console.IsInputRedirected, Screen: !Console.IsOutputRedirected);
            IAnsiConsole console = terminal.Screen ? AnsiConsole.Console : PlainConsole.Create(Console.Out);
            return await Run(args, console, Console.Out, Console.Error, terminal, cancel.Token).ConfigureAwait(false);
        }
        finally
        {
            Console.CancelKeyPress -= onCancel;
        }
    }

    /// <summary>Runs one command; every failure the user can cause is one line on <paramref name="error"/> and its exit code.</summary>
    public static async Task<int> Run(string[] args, IAnsiConsole console, TextWriter output, TextWriter error, Terminal terminal, CancellationToken cancellationToken)
    {
        try
        {
            CommandLine line = CommandLine.Parse(args);
            if (line.Help)
            {
                await output.WriteLineAsync(CommandLine.Usage).ConfigureAwait(false);
                return ExitCodes.Success;
            }

            if (line.Version)
            {
                await output.WriteLineAsync(typeof(Program).Assembly.GetName().Version?.ToString() ?? "?").ConfigureAwait(false);
                return ExitCodes.Success;
            }

            return line.Command switch
            {
                "ps" => await Commands.ListAsync(line, console, output).ConfigureAwait(false),
                "replay" => await Commands.ReplayAsync(line, console, output, terminal).ConfigureAwait(false),
                _ => await Commands.InspectAsync(line, console, output, terminal, cancellationToken).ConfigureAwait(false),
            };
        }
        catch (InspectorException ex)
        {
            await error.WriteLineAsync(ex.Message).ConfigureAwait(false);
            return ex.ExitCode;
        }
    }
}
