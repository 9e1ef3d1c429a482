using System;
using System.Globalization;

namespace FrameLoop;

internal static class SampleFormat
{
    public static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    public static string Ms(TimeSpan value) => value.TotalMilliseconds.ToString(value.TotalMilliseconds < 10 ? "0.##" : "0.#", CultureInfo.InvariantCulture) + " ms";
}
