using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using Microsoft.Diagnostics.NETCore.Client;

namespace PriorityAsync.Inspector;

/// <summary>Finds the target: a process id or a name, and the list of candidates.</summary>
internal static class TargetProcess
{
    /// <summary>Resolves <paramref name="target"/> (a process id, or a process or app name) to a running process.</summary>
    /// <exception cref="InspectorException">No such process, or several with that name.</exception>
    public static (int Id, string Name) Resolve(string target)
    {
        if (int.TryParse(target, NumberStyles.None, CultureInfo.InvariantCulture, out int id))
        {
            if (id <= 0 || !IsAlive(id))
            {
                throw new InspectorException(ExitCodes.NoSuchProcess, $"prio: no process has id {id} (see the running .NET processes with `prio ps`).");
            }

            return (id, NameOf(id));
        }

        var matches = List().Where(p => string.Equals(p.Name, target, StringComparison.OrdinalIgnoreCase)).ToList();
        return matches.Count switch
        {
            0 => throw new InspectorException(ExitCodes.NoSuchProcess, $"prio: no .NET process named '{target}' publishes a diagnostics port (see `prio ps`)."),
            1 => (matches[0].Id, matches[0].Name),
            _ => throw new InspectorException(ExitCodes.AmbiguousName, $"prio: {matches.Count} processes are named '{target}' ({string.Join(", ", matches.Select(m => m.Id))}): give a process id."),
        };
    }

    /// <summary>The .NET processes that publish a diagnostics port, but this one.</summary>
    public static IReadOnlyList<ProcessRow> List()
    {
        int self = Environment.ProcessId;
        var rows = new List<ProcessRow>();
        foreach (int id in DiagnosticsClient.GetPublishedProcesses().Distinct().Order())
        {
            if (id == self || !IsAlive(id))
            {
                continue;
            }

            rows.Add(new ProcessRow(id, NameOf(id), CommandLineOf(id), LoadsPriorityAsync(id)));
        }

        return rows;
    }

    /// <summary>Whether process <paramref name="id"/> runs. On Linux from /proc: a process that has exited but whose parent has not
    /// reaped it yet (a zombie) has exited.</summary>
    public static bool IsAlive(int id)
    {
        string stat = $"/proc/{id}/stat";
        if (Directory.Exists("/proc/self"))
        {
            try
            {
                // "pid (comm) S ...": the state follows the last ')' (the name may hold one).
                string text = File.ReadAllText(stat);
                int close = text.LastIndexOf(')');
                return close > 0 && close + 2 < text.Length && text[close + 2] is not ('Z' or 'X' or 'x');
            }
            catch (UnauthorizedAccessException)
            {
                return true; // another user's: it exists
            }
            catch (IOException)
            {
                return false; // no such process, or it ended as we read
            }
        }

        try
        {
            using Process process = Process.GetProcessById(id);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false; // no such process
        }
        catch (InvalidOperationException)
        {
            return false; // it exited meanwhile
        }
    }

    /// <summary>The app's name: the entry assembly of <c>dotnet app.dll</c>, else the process name.</summary>
    public static string NameOf(int id)
    {
        string[] arguments = Arguments(id);
        if (arguments.Length > 1 && Path.GetFileNameWithoutExtension(arguments[0]) == "dotnet")
        {
            string? app = arguments.Skip(1).FirstOrDefault(a => a.EndsWith(".dll", StringComparison.OrdinalIgnoreCase));
            if (app is not null)
            {
                return Path.GetFileNameWithoutExtension(app);
            }
        }

        try
        {
            using Process process = Process.GetProcessById(id);
            return process.ProcessName;
        }
        catch (Exception ex) when (ex is ArgumentException or InvalidOperationException)
        {
            return "?";
        }
    }

    /// <summary>Linux: whether PriorityAsync.dll is mapped into the process; null where the map cannot be read.</summary>
    public static bool? LoadsPriorityAsync(int id)
    {
        string maps = $"/proc/{id}/maps";
        try
        {
            return File.Exists(maps) ? File.ReadLines(maps).Any(line => line.EndsWith("/PriorityAsync.dll", StringComparison.Ordinal)) : null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    private static string CommandLineOf(int id) => string.Join(' ', Arguments(id));

    private static string[] Arguments(int id)
    {
        try
        {
            string path = $"/proc/{id}/cmdline";
            return File.Exists(path) ? File.ReadAllText(path).Split('\0', StringSplitOptions.RemoveEmptyEntries) : [];
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }
}
