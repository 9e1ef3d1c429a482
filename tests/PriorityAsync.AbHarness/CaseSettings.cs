using System;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;

namespace PriorityAsync.AbHarness;

/// <summary>What a child process measures: which cases, with and without an AsyncLocal, how long, and extra context options.</summary>
public sealed class CaseSettings
{
    /// <summary>Every case, in the order they run.</summary>
    public static readonly string[] AllCases = ["post-drain", "yield", "prioritize-inline", "prioritize-queued", "stream-1p", "wake", "host-drain", "invoke"];

    /// <summary>Gets or sets the cases to run.</summary>
    public IReadOnlyList<string> Cases { get; set; } = AllCases;

    /// <summary>Gets or sets whether each case runs with no AsyncLocal set (<c>plain</c>) and/or with one set (<c>asynclocal</c>).</summary>
    public IReadOnlyList<string> Variants { get; set; } = ["plain"];

    /// <summary>Gets or sets the measured rounds of a throughput case (its figure is their median).</summary>
    public int Rounds { get; set; } = 9;

    /// <summary>Gets or sets the unmeasured rounds before them (JIT tiering, warm queues).</summary>
    public int WarmupRounds { get; set; } = 5;

    /// <summary>Gets or sets the wake-ups measured per variant (each costs about 1.1 ms: the loop is let park first).</summary>
    public int WakeSamples { get; set; } = 500;

    /// <summary>Gets or sets extra <see cref="PriorityContextOptions"/> properties, by name, as text (e.g. <c>TimeSlice=null</c>);
    /// applied by reflection, so a side whose options lack the property fails clearly instead of not compiling.</summary>
    public IReadOnlyList<KeyValuePair<string, string>> OptionSettings { get; set; } = [];

    /// <summary>Creates the options of every context a case uses: 3 levels, plus <see cref="OptionSettings"/>.</summary>
    public PriorityContextOptions CreateOptions(string name)
    {
        var options = new PriorityContextOptions { Levels = 3, Name = name };
        foreach ((string property, string text) in OptionSettings)
        {
            PropertyInfo info = typeof(PriorityContextOptions).GetProperty(property, BindingFlags.Public | BindingFlags.Instance)
                ?? throw new ArgumentException($"PriorityContextOptions of this side has no public property '{property}' (--set {property}={text}).");
            info.SetValue(options, Parse(info.PropertyType, text, property));
        }

        return options;
    }

    private static object? Parse(Type type, string text, string property)
    {
        Type? underlying = Nullable.GetUnderlyingType(type);
        if (text == "null")
        {
            return underlying is not null || !type.IsValueType
                ? null
                : throw new ArgumentException($"PriorityContextOptions.{property} ({type.Name}) cannot be null.");
        }

        Type target = underlying ?? type;
        if (target == typeof(TimeSpan))
        {
            // A number is milliseconds; anything else is a TimeSpan ("00:00:00.020").
            return double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double ms)
                ? TimeSpan.FromMilliseconds(ms)
                : TimeSpan.Parse(text, CultureInfo.InvariantCulture);
        }

        return Convert.ChangeType(text, target, CultureInfo.InvariantCulture);
    }
}
