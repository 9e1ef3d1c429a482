using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.Json;
using PriorityAsync.AbHarness;

// The A/B harness of the hot path (README.md beside this file).
//   build --a <side> --b <side> [--out <dir>]     build both sides (heavy); a side is a .csproj, a PriorityAsync.dll or git:<revision>
//   run [--out <dir>] [--processes <n>] [--attach-b <prio.dll>] [case options]   alternate A, B, A, B, ... processes and report
//                                                 (measure: quiet); --attach-b attaches the inspector to every B process first,
//                                                 with --attach-b-args "<inspector options>" (e.g. "--every-item-below 1000000 --sample 1000")
//   cases [--json] [case options]                 one process's measurements, against the library this copy was built with
// Case options: --cases <a,b,...> --async-local (each case plain and with an AsyncLocal set) --rounds <n> --warmup <n>
//   --samples <n> (wake-ups) --set <Property>=<value> (a PriorityContextOptions property, e.g. TimeSlice=null; repeatable).
try
{
    if (args.Length == 0)
    {
        throw new ArgumentException("Usage: build --a <side> --b <side> [--out <dir>] | run [--out <dir>] [--processes <n>] [case options] | cases [--json] [case options]. See README.md.");
    }

    string command = args[0];
    var rest = args.Skip(1).ToList();
    string outDir = TakeValue(rest, "--out") ?? Path.Combine(Path.GetTempPath(), "priorityasync-ab");
    switch (command)
    {
        case "build":
        {
            string a = TakeValue(rest, "--a") ?? throw new ArgumentException("build needs --a <side>.");
            string b = TakeValue(rest, "--b") ?? throw new ArgumentException("build needs --b <side>.");
            ThrowIfAny(rest);
            SideBuilder.Build(outDir, "A", a);
            SideBuilder.Build(outDir, "B", b);
            Console.WriteLine($"Built. Measure (on a quiet machine) with: dotnet {SideBuilder.HarnessDll(outDir, "A")} run --out {outDir} [--processes 5] [--async-local] [--cases ...]");
            return 0;
        }

        case "run":
        {
            int processes = TakeInt(rest, "--processes") ?? 5;
            string? attachB = TakeValue(rest, "--attach-b");
            string[] attachArguments = (TakeValue(rest, "--attach-b-args") ?? string.Empty).Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (attachB is not null && !File.Exists(attachB))
            {
                throw new ArgumentException($"--attach-b takes the inspector's PriorityAsync.Inspector.dll; '{attachB}' does not exist.");
            }

            ParseCaseSettings([.. rest]); // fail here, not in a child
            return Driver.Run(outDir, processes, rest, Console.Out, attachB, attachArguments);
        }

        case "cases":
        {
            bool json = rest.Remove("--json");
            CaseSettings settings = ParseCaseSettings(rest);
            InspectorGate.WaitIfAsked();
            Cases.Run(settings, result => Console.WriteLine(json
                ? JsonSerializer.Serialize(result)
                : FormattableString.Invariant($"{result.Case,-18} {result.Variant,-10} {result.Metric,-15} {result.Value,10:F2}")));
            return 0;
        }

        default:
            throw new ArgumentException($"Unknown command '{command}': build, run or cases.");
    }
}
catch (ArgumentException ex)
{
    Console.Error.WriteLine(ex.Message);
    return 2;
}

static CaseSettings ParseCaseSettings(List<string> arguments)
{
    var settings = new CaseSettings();
    if (TakeValue(arguments, "--cases") is { } cases)
    {
        string[] names = cases.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string? unknown = names.FirstOrDefault(n => !CaseSettings.AllCases.Contains(n));
        settings.Cases = unknown is null ? names : throw new ArgumentException($"Unknown case '{unknown}'. Cases: {string.Join(", ", CaseSettings.AllCases)}.");
    }

    if (arguments.Remove("--async-local"))
    {
        settings.Variants = ["plain", "asynclocal"];
    }

    settings.Rounds = TakeInt(arguments, "--rounds") ?? settings.Rounds;
    settings.WarmupRounds = TakeInt(arguments, "--warmup") ?? settings.WarmupRounds;
    settings.WakeSamples = TakeInt(arguments, "--samples") ?? settings.WakeSamples;
    var sets = new List<KeyValuePair<string, string>>();
    while (TakeValue(arguments, "--set") is { } assignment)
    {
        int equals = assignment.IndexOf('=', StringComparison.Ordinal);
        if (equals <= 0)
        {
            throw new ArgumentException($"--set takes <Property>=<value>, not '{assignment}'.");
        }

        sets.Add(new(assignment[..equals], assignment[(equals + 1)..]));
    }

    settings.OptionSettings = sets;
    ThrowIfAny(arguments);
    settings.CreateOptions("check"); // a property this side lacks fails now
    return settings;
}

static string? TakeValue(List<string> arguments, string name)
{
    int index = arguments.IndexOf(name);
    if (index < 0)
    {
        return null;
    }

    if (index + 1 >= arguments.Count)
    {
        throw new ArgumentException($"{name} needs a value.");
    }

    string value = arguments[index + 1];
    arguments.RemoveRange(index, 2);
    return value;
}

static int? TakeInt(List<string> arguments, string name)
{
    string? text = TakeValue(arguments, name);
    if (text is null)
    {
        return null;
    }

    return int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out int value) && value >= 1
        ? value
        : throw new ArgumentException($"{name} takes a whole number of at least 1, not '{text}'.");
}

static void ThrowIfAny(List<string> arguments)
{
    if (arguments.Count > 0)
    {
        throw new ArgumentException($"Unknown argument '{arguments[0]}'. See README.md.");
    }
}
