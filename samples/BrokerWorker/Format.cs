using System;
using System.Globalization;

namespace BrokerWorker;

/// <summary>Numbers as the report prints them.</summary>
public static class Format
{
    public static string Seed(TimeSpan value) =>
        value.TotalSeconds >= 1 && value.Ticks % TimeSpan.TicksPerSecond == 0
            ? $"{value.TotalSeconds.ToString("0", CultureInfo.InvariantCulture)} s"
            : Ms(value);

    public static string Ms(TimeSpan value) => $"{value.TotalMilliseconds.ToString("0.#", CultureInfo.InvariantCulture)} ms";

    public static string Sec(TimeSpan value) => $"{value.TotalSeconds.ToString("0.00", CultureInfo.InvariantCulture)} s";

    public static string Ratio(double value) => value.ToString("0.000", CultureInfo.InvariantCulture);
}
