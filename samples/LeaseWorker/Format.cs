using System;
using System.Globalization;

namespace LeaseWorker;

/// <summary>Durations as people read them: <c>250 ms</c>, <c>1.5 s</c>.</summary>
public static class Format
{
    public static string Duration(TimeSpan value)
    {
        double ms = value.TotalMilliseconds;
        if (Math.Abs(ms) >= 1000)
        {
            return (ms / 1000).ToString("0.###", CultureInfo.InvariantCulture) + " s";
        }

        return ms.ToString(Math.Abs(ms) >= 10 ? "0.#" : "0.###", CultureInfo.InvariantCulture) + " ms";
    }
}
