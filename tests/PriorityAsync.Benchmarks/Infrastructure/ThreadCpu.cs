using System;
using System.Globalization;
using System.IO;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>The CPU time of one of the library's own threads, found by name (Linux: /proc/self/task/*/schedstat, in nanoseconds).</summary>
public static class ThreadCpu
{
    /// <summary>Nanoseconds the first thread whose OS name starts with <paramref name="namePrefix"/> has spent on a CPU; -1 when there is
    /// no such thread or no /proc. The OS keeps 15 characters of a thread's name.</summary>
    public static long Nanoseconds(string namePrefix)
    {
        if (!Directory.Exists("/proc/self/task"))
        {
            return -1;
        }

        string prefix = namePrefix.Length > 15 ? namePrefix[..15] : namePrefix;
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                if (File.ReadAllText(Path.Combine(task, "comm")).StartsWith(prefix, StringComparison.Ordinal))
                {
                    string schedstat = File.ReadAllText(Path.Combine(task, "schedstat"));
                    return long.Parse(schedstat.Split(' ')[0], CultureInfo.InvariantCulture);
                }
            }
            catch (IOException)
            {
                // the task ended while we looked
            }
        }

        return -1;
    }
}
