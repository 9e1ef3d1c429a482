using System;
using System.Diagnostics;

namespace PriorityAsync.Internal;

/// <summary>The time quota option (<see cref="PrioritySchedulerOptions.TimeSlice"/>, <see cref="PrioritySchedulerOptions.TimeSlice"/>): its
/// one validation and its conversions, shared by the two schedulers.</summary>
internal static class TimeSliceOption
{
    /// <summary>Throws unless <paramref name="slice"/> is null (no quota) or within <see cref="PrioritySchedulerOptions.MinTimeSlice"/> to
    /// <see cref="PrioritySchedulerOptions.MaxTimeSlice"/>; <paramref name="optionsType"/> names the options class in the message,
    /// <paramref name="optionName"/> is the exception's parameter name (the option's).</summary>
    public static void Validate(TimeSpan? slice, string optionsType, string optionName)
    {
        if (slice is { } value && (value < PriorityContextOptions.MinTimeSlice || value > PriorityContextOptions.MaxTimeSlice))
        {
            throw new ArgumentOutOfRangeException(
                optionName,
                value,
                $"{optionsType}.TimeSlice must be null (no quota) or between {PriorityContextOptions.MinTimeSlice} and {PriorityContextOptions.MaxTimeSlice}.");
        }
    }

    /// <summary>The quota in <see cref="Stopwatch"/> ticks; 0: no quota.</summary>
    public static long ToStopwatchTicks(TimeSpan? slice) =>
        slice is { } value ? (long)(value.TotalSeconds * Stopwatch.Frequency) : 0;

    /// <summary>The slice clock's period for a quota: a quarter of the slice, at least 1 ms (<see cref="int.MaxValue"/>: no quota).</summary>
    public static int ToTickMilliseconds(TimeSpan? slice) =>
        slice is { } value ? Math.Max(1, (int)(value.TotalMilliseconds / 4)) : int.MaxValue;
}
