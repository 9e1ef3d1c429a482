using System;
using System.Globalization;

namespace LeaseWorker;

/// <summary>Formatting and parsing of durations as people write them: <c>250ms</c>, <c>1s</c>, <c>1.5s</c>.</summary>
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

    /// <summary>Parses <c>250ms</c>, <c>1s</c>, <c>1.5s</c>, <c>-1s</c> (negative values parse; the settings reject them with a clear message).</summary>
    public static bool TryParseDuration(string text, out TimeSpan value)
    {
        value = default;
        string s = text.Trim();
        double factor;
        if (s.EndsWith("ms", StringComparison.OrdinalIgnoreCase))
        {
            factor = 1;
            s = s[..^2];
        }
        else if (s.EndsWith('s') || s.EndsWith('S'))
        {
            factor = 1000;
            s = s[..^1];
        }
        else
        {
            return false;
        }

        if (!double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture, out double number) ||
            double.IsNaN(number) || double.IsInfinity(number) || Math.Abs(number * factor) > TimeSpan.FromDays(1).TotalMilliseconds)
        {
            return false;
        }

        value = TimeSpan.FromMilliseconds(number * factor);
        return true;
    }
}
