using System;
using System.IO;

namespace Samples.Support;

/// <summary>What the samples say of the machine beside a timing: a figure measured on a busy machine means little without it.</summary>
public static class Machine
{
    /// <summary>The 1-, 5- and 15-minute load averages, as <c>uptime</c> shows them; null where /proc/loadavg cannot be read.</summary>
    public static string? LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ')[..3]);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
