using System;
using System.Collections.Generic;
using System.CommandLine;
using System.CommandLine.Invocation;
using System.CommandLine.Parsing;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using PriorityAsync;

namespace Samples.Support;

/// <summary>
/// The command line of a sample, on System.CommandLine, with the conventions every sample shares:
/// <list type="bullet">
/// <item><c>--name value</c> or <c>--name=value</c>; durations as <c>10us</c>, <c>250ms</c>, <c>1.5s</c>; lists comma-separated
/// under a plural name (<c>--modes a,b</c>, or <c>all</c>); output switches <c>--wide</c> and <c>--json</c>;</item>
/// <item><c>-h</c>, <c>--help</c> or <c>-?</c>: the help System.CommandLine generates from the options, on stdout, exit code 0;
/// <c>--version</c>: the sample's version and the PriorityAsync it runs on, on stdout, exit code 0;</item>
/// <item>bad input: one line, <c>Sample: what is wrong (see --help).</c> on stderr, exit code 2 (<see cref="BadInput"/>).</item>
/// </list>
/// Each option's value is checked where it is parsed (its own one-line error); checks across options stay with the sample.
/// </summary>
public sealed class SampleCommandLine
{
    /// <summary>The exit code of every sample for bad input.</summary>
    public const int BadInput = 2;

    // What "off" parses to: never a duration, which parses to at most a day either way.
    private static readonly TimeSpan s_off = TimeSpan.MinValue;

    // The defaults of the Duration options (ConditionalWeakTable: keyed by the option object, as long as it lives).
    private static readonly ConditionalWeakTable<Option<TimeSpan?>, StrongBox<TimeSpan?>> s_durationDefaults = [];

    // The defaults of the List and WholeNumbers options (an IReadOnlyList of the option's item type).
    private static readonly ConditionalWeakTable<Option, object> s_listDefaults = [];

    private readonly RootCommand _command;

    /// <summary>
    /// A root command whose help starts with <paramref name="description"/> (say what the sample runs, and its exit codes). Its
    /// <c>--version</c> names the calling assembly (the sample) and the PriorityAsync it runs on.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)] // GetCallingAssembly: the sample's assembly, not this one's
    public SampleCommandLine(string description)
    {
        _command = new RootCommand(description);
        Version = $"{Describe(Assembly.GetCallingAssembly())} (PriorityAsync {VersionOf(typeof(PriorityContext).Assembly)})";
        VersionOption version = _command.Options.OfType<VersionOption>().Single();
        version.Action = new ShowVersion(Version);
    }

    /// <summary>What <c>--version</c> prints: the sample's name and version, and the PriorityAsync version it runs on.</summary>
    public string Version { get; }

    /// <summary>Adds an option to the command and returns it, to read its value from the parse result.</summary>
    public Option<T> Add<T>(Option<T> option)
    {
        _command.Add(option);
        return option;
    }

    /// <summary>
    /// Parses <paramref name="args"/>. False with one line in <paramref name="error"/> for bad input; true otherwise, with
    /// <paramref name="show"/> set when help or the version was asked for: print it on stdout and exit 0 (the other values are then
    /// the defaults).
    /// </summary>
    public bool TryParse(IReadOnlyList<string> args, out ParseResult result, out string? show, [NotNullWhen(false)] out string? error)
    {
        result = _command.Parse([.. args]);
        show = result.Action switch
        {
            System.CommandLine.Help.HelpAction => Help(),
            ShowVersion => Version + Environment.NewLine,
            _ => null,
        };
        if (show is not null)
        {
            error = null;
            return true;
        }

        if (result.UnmatchedTokens.Count > 0)
        {
            string token = result.UnmatchedTokens[0];
            error = token.StartsWith('-') ? $"unknown option '{token}' (see --help)." : $"unexpected argument '{token}' (see --help).";
            return false;
        }

        ParseError? first = result.Errors.Count > 0 ? result.Errors[0] : null;
        if (first is null)
        {
            error = null;
            return true;
        }

        // An option given without its value, or twice: say so in the same words in every sample (System.CommandLine's own
        // messages differ).
        error = first.SymbolResult switch
        {
            OptionResult { Tokens.Count: 0 } option when option.Option.Arity.MinimumNumberOfValues > 0 => $"{option.Option.Name} needs a value (see --help).",
            OptionResult { Tokens.Count: > 1 } option when option.Option.Arity.MaximumNumberOfValues == 1 => $"{option.Option.Name} is given more than once (see --help).",
            _ => first.Message,
        };
        return false;
    }

    /// <summary>
    /// <see cref="TryParse(IReadOnlyList{string}, out ParseResult, out string?, out string?)"/>, then the sample's settings:
    /// <paramref name="read"/> makes them from the parse, <paramref name="validate"/> checks them across options (one line, or null).
    /// On help, the version or an option that does not parse they are <paramref name="defaults"/>.
    /// </summary>
    public bool TryParse<T>(
        IReadOnlyList<string> args, T defaults, Func<ParseResult, T> read, Func<T, string?> validate, out T value, out string? show, [NotNullWhen(false)] out string? error)
    {
        value = defaults;
        if (!TryParse(args, out ParseResult result, out show, out error) || show is not null)
        {
            return error is null;
        }

        value = read(result);
        error = validate(value);
        return error is null;
    }

    /// <summary>
    /// What a sample's entry point does with its parse: null to run; otherwise the exit code, once the help or the version is
    /// written on stdout (0) or the one-line error, after the sample's name, on stderr (<see cref="BadInput"/>).
    /// </summary>
    public static int? Exit(string sample, bool parsed, string? show, string? error)
    {
        if (!parsed)
        {
            Console.Error.WriteLine($"{sample}: {error}");
            return BadInput;
        }

        Console.Out.Write(show ?? "");
        return show is null ? null : 0;
    }

    /// <summary>The generated help: description, usage and every option with its default.</summary>
    public string Help()
    {
        var output = new StringWriter(CultureInfo.InvariantCulture);
        _command.Parse(["--help"]).Invoke(new InvocationConfiguration { Output = output });
        return output.ToString();
    }

    /// <summary>
    /// A duration (<c>10us</c>, <c>250ms</c>, <c>1.5s</c>; negative values parse, the sample decides). With <paramref name="offAllowed"/>,
    /// <c>off</c> is accepted too: read such an option with <see cref="GetDuration"/>, which gives null for it.
    /// </summary>
    public static Option<TimeSpan?> Duration(string name, TimeSpan? defaultValue, string description, bool offAllowed = false)
    {
        // No DefaultValueFactory: the help would show the default as a TimeSpan (00:00:00.2500000); it says "default 250ms" instead.
        var option = new Option<TimeSpan?>(name)
        {
            Description = defaultValue is { } shown ? $"{description} [default: {FormatDuration(shown)}]" : description,
            HelpName = offAllowed ? "D|off" : "D",
            CustomParser = result =>
            {
                string text = result.Tokens[0].Value;
                if (offAllowed && text.Equals("off", StringComparison.OrdinalIgnoreCase))
                {
                    return s_off; // System.CommandLine 3.0.0 throws InvalidCastException when a custom parser returns null
                }

                if (TryParseDuration(text, out TimeSpan value))
                {
                    return value;
                }

                result.AddError($"{name} must be a duration such as 250ms or 1.5s{(offAllowed ? ", or off" : "")} (got '{text}').");
                return null;
            },
        };
        s_durationDefaults.Add(option, new StrongBox<TimeSpan?>(defaultValue));
        return option;
    }

    /// <summary>The value of a <see cref="Duration"/> option: its default when not given, null when <c>off</c> (or not given without a default).</summary>
    public static TimeSpan? GetDuration(ParseResult result, Option<TimeSpan?> option)
    {
        if (result.GetResult(option) is null)
        {
            return s_durationDefaults.TryGetValue(option, out StrongBox<TimeSpan?>? defaultValue) ? defaultValue.Value : null;
        }

        TimeSpan? value = result.GetValue(option);
        return value == s_off ? null : value;
    }

    /// <summary>A duration as the command line takes it: <c>10us</c>, <c>250ms</c>, <c>1.5s</c>.</summary>
    public static string FormatDuration(TimeSpan value) =>
        Math.Abs(value.TotalMilliseconds) >= 1000 ? $"{value.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture)}s"
        : Math.Abs(value.TotalMilliseconds) >= 1 || value == TimeSpan.Zero ? $"{value.TotalMilliseconds.ToString("0.###", CultureInfo.InvariantCulture)}ms"
        : $"{value.TotalMicroseconds.ToString("0.###", CultureInfo.InvariantCulture)}us";

    /// <summary>A whole number.</summary>
    public static Option<int> WholeNumber(string name, int defaultValue, string description) => new(name)
    {
        Description = description,
        HelpName = "N",
        DefaultValueFactory = _ => defaultValue,
        CustomParser = result =>
        {
            string text = result.Tokens[0].Value;
            if (int.TryParse(text.Replace("_", "", StringComparison.Ordinal), NumberStyles.Integer, CultureInfo.InvariantCulture, out int value))
            {
                return value;
            }

            result.AddError($"{name} must be a whole number (got '{text}').");
            return defaultValue;
        },
    };

    /// <summary>A number (invariant culture: <c>0.1</c>).</summary>
    public static Option<double> Number(string name, double defaultValue, string description) => new(name)
    {
        Description = description,
        HelpName = "X",
        DefaultValueFactory = _ => defaultValue,
        CustomParser = result =>
        {
            string text = result.Tokens[0].Value;
            if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double value) && double.IsFinite(value))
            {
                return value;
            }

            result.AddError($"{name} must be a number such as 0.1 (got '{text}').");
            return defaultValue;
        },
    };

    /// <summary>One of <paramref name="choices"/> (any case; the value is returned in the choice's case).</summary>
    public static Option<string> Choice(string name, string defaultValue, string description, params string[] choices) => new(name)
    {
        Description = description,
        HelpName = string.Join('|', choices),
        DefaultValueFactory = _ => defaultValue,
        CustomParser = result =>
        {
            string text = result.Tokens[0].Value;
            string? choice = choices.FirstOrDefault(c => c.Equals(text, StringComparison.OrdinalIgnoreCase));
            if (choice is null)
            {
                result.AddError($"{name} must be {Either(choices)} (got '{text}').");
                return defaultValue;
            }

            return choice;
        },
    };

    /// <summary>
    /// A comma-separated list of some of <paramref name="all"/> (any case, duplicates dropped, order kept), or <c>all</c> for every
    /// one; <paramref name="noun"/> names one item. Read it with <see cref="GetList{T}"/>, which gives <paramref name="defaultValue"/>
    /// when it is not given.
    /// </summary>
    public static Option<IReadOnlyList<string>> List(string name, IReadOnlyList<string> all, IReadOnlyList<string> defaultValue, string noun, string description)
    {
        // No DefaultValueFactory: the help would join the default with '|', as if it were a choice; it says "a,b,c" instead.
        var option = new Option<IReadOnlyList<string>>(name)
        {
            Description = $"{description} [default: {string.Join(',', defaultValue)}]",
            HelpName = "LIST|all",
            Arity = ArgumentArity.ExactlyOne, // one comma-separated value: a collection option would take every word that follows
            CustomParser = result =>
            {
                string text = result.Tokens[0].Value;
                if (text.Trim().Equals("all", StringComparison.OrdinalIgnoreCase))
                {
                    return all;
                }

                var list = new List<string>();
                foreach (string part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                {
                    string? item = all.FirstOrDefault(a => a.Equals(part, StringComparison.OrdinalIgnoreCase));
                    if (item is null)
                    {
                        result.AddError($"unknown {noun} '{part}'; the {Plural(noun)} are {string.Join(", ", all)}.");
                        return defaultValue;
                    }

                    if (!list.Contains(item))
                    {
                        list.Add(item);
                    }
                }

                if (list.Count == 0)
                {
                    result.AddError($"{name} needs at least one {noun}.");
                }

                return list;
            },
        };
        s_listDefaults.Add(option, defaultValue);
        return option;
    }

    /// <summary>
    /// A comma-separated list of whole numbers from <paramref name="min"/> to <paramref name="max"/> (<c>10,1_000</c>; order and
    /// duplicates kept). Read it with <see cref="GetList{T}"/>, which gives <paramref name="defaultValue"/> when it is not given.
    /// </summary>
    public static Option<IReadOnlyList<int>> WholeNumbers(string name, IReadOnlyList<int> defaultValue, int min, int max, string description)
    {
        var option = new Option<IReadOnlyList<int>>(name)
        {
            Description = $"{description} [default: {string.Join(',', defaultValue)}]",
            HelpName = "N[,N]",
            Arity = ArgumentArity.ExactlyOne,
            CustomParser = result =>
            {
                string text = result.Tokens[0].Value;
                var list = new List<int>();
                foreach (string part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                {
                    if (!int.TryParse(part.Replace("_", "", StringComparison.Ordinal), NumberStyles.Integer, CultureInfo.InvariantCulture, out int value) ||
                        value < min || value > max)
                    {
                        result.AddError($"{name} must be whole numbers from {min} to {max} separated by commas (got '{text}').");
                        return defaultValue;
                    }

                    list.Add(value);
                }

                if (list.Count == 0)
                {
                    result.AddError($"{name} needs at least one number.");
                }

                return list;
            },
        };
        s_listDefaults.Add(option, defaultValue);
        return option;
    }

    /// <summary>The value of a <see cref="List"/> or <see cref="WholeNumbers"/> option: its default when it is not given.</summary>
    public static IReadOnlyList<T> GetList<T>(ParseResult result, Option<IReadOnlyList<T>> option) =>
        result.GetResult(option) is null && s_listDefaults.TryGetValue(option, out object? defaultValue)
            ? (IReadOnlyList<T>)defaultValue
            : result.GetValue(option)!;

    /// <summary>A string (a path, a name, a connection string).</summary>
    public static Option<string?> Text(string name, string helpName, string description) => new(name)
    {
        Description = description,
        HelpName = helpName,
    };

    /// <summary>A file the sample writes: a name, in a folder that exists (checked here, before the run that fills it).</summary>
    public static Option<string?> OutputFile(string name, string helpName, string description) => new(name)
    {
        Description = description,
        HelpName = helpName,
        CustomParser = result =>
        {
            string text = result.Tokens[0].Value;
            string? folder = text.Trim().Length == 0 || text.EndsWith('/') || text.EndsWith(Path.DirectorySeparatorChar) || Directory.Exists(text)
                ? null
                : Path.GetDirectoryName(Path.GetFullPath(text));
            if (folder is null)
            {
                result.AddError($"{name} needs a file name (got '{text}').");
            }
            else if (!Directory.Exists(folder))
            {
                result.AddError($"{name}: the folder '{folder}' does not exist (got '{text}').");
            }

            return text;
        },
    };

    /// <summary>A switch: present or not.</summary>
    public static Option<bool> Flag(string name, string description) => new(name) { Description = description };

    /// <summary><paramref name="option"/>, left out of the help: how a sample starts its own child processes.</summary>
    public static Option<T> Hidden<T>(Option<T> option)
    {
        option.Hidden = true;
        return option;
    }

    /// <summary>Parses <c>10us</c>, <c>250ms</c>, <c>1.5s</c> (invariant culture, at most a day either way).</summary>
    public static bool TryParseDuration(string text, out TimeSpan value)
    {
        value = default;
        string s = text.Trim();
        (string Suffix, double Microseconds)[] units = [("us", 1), ("ms", 1_000), ("s", 1_000_000)];
        foreach ((string suffix, double microseconds) in units)
        {
            if (s.EndsWith(suffix, StringComparison.OrdinalIgnoreCase) &&
                double.TryParse(s[..^suffix.Length], NumberStyles.Float, CultureInfo.InvariantCulture, out double number) &&
                double.IsFinite(number) && Math.Abs(number * microseconds) <= TimeSpan.FromDays(1).TotalMicroseconds)
            {
                value = TimeSpan.FromMicroseconds(number * microseconds);
                return true;
            }
        }

        return false;
    }

    private static string Describe(Assembly assembly) => $"{assembly.GetName().Name} {VersionOf(assembly)}";

    private static string VersionOf(Assembly assembly) =>
        assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? assembly.GetName().Version?.ToString() ?? "(no version)";

    private static string Plural(string noun) => noun.EndsWith('y') ? $"{noun[..^1]}ies" : $"{noun}s";

    private static string Either(string[] choices) =>
        choices.Length == 1 ? choices[0] : $"{string.Join(", ", choices[..^1])} or {choices[^1]}";

    /// <summary><c>--version</c>: writes <see cref="Version"/> (the sample's, and the PriorityAsync it runs on), exit code 0.</summary>
    private sealed class ShowVersion(string version) : SynchronousCommandLineAction
    {
        public override int Invoke(ParseResult parseResult)
        {
            parseResult.InvocationConfiguration.Output.WriteLine(version);
            return 0;
        }
    }
}
