using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace SocketCompletions;

/// <summary>The command line. Bad arguments: one line on stderr, exit code 2 (see Program.cs).</summary>
internal sealed class Arguments
{
    public const string Usage =
        """
        Usage: SocketCompletions [--requests N] [--starve-seconds S]
          --requests N        request/reply round trips per phase, 1 to 10000 (default 200)
          --starve-seconds S  how long the flood scenario keeps every pool thread blocked at most, 0.5 to 30 (default 3)
          --help              this text
        Runs itself in four child processes: DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS unset and =1, each with the pool's
        threads blocked forever ("blocked") and with a flood of blocking work items ("flood").

        """;

    public int Requests { get; private set; } = 200;

    public TimeSpan StarveFor { get; private set; } = TimeSpan.FromSeconds(3);

    public bool ShowHelp { get; private set; }

    /// <summary>Set in a child process: <c>blocked</c> or <c>flood</c>.</summary>
    public string? ChildScenario { get; private set; }

    public static bool TryParse(string[] args, [NotNullWhen(true)] out Arguments? arguments, [NotNullWhen(false)] out string? error)
    {
        var parsed = new Arguments();
        arguments = null;
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            if (name is "--help" or "-h")
            {
                parsed.ShowHelp = true;
                continue;
            }

            if (name is not ("--requests" or "--starve-seconds" or "--child"))
            {
                error = $"unknown argument '{name}'; use --requests N, --starve-seconds S or --help.";
                return false;
            }

            if (i + 1 >= args.Length)
            {
                error = $"{name} needs a value.";
                return false;
            }

            string value = args[++i];
            switch (name)
            {
                case "--requests":
                    if (!int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out int requests) || requests is < 1 or > 10_000)
                    {
                        error = $"--requests must be a whole number from 1 to 10000, not '{value}'.";
                        return false;
                    }

                    parsed.Requests = requests;
                    break;
                case "--starve-seconds":
                    if (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out double seconds) || seconds is < 0.5 or > 30)
                    {
                        error = $"--starve-seconds must be a number of seconds from 0.5 to 30, not '{value}'.";
                        return false;
                    }

                    parsed.StarveFor = TimeSpan.FromSeconds(seconds);
                    break;
                default:
                    if (value is not ("blocked" or "flood"))
                    {
                        error = $"--child must be 'blocked' or 'flood', not '{value}'.";
                        return false;
                    }

                    parsed.ChildScenario = value;
                    break;
            }
        }

        arguments = parsed;
        error = null;
        return true;
    }
}
