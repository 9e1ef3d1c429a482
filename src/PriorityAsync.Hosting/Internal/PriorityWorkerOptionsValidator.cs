using System;
using System.Collections.Generic;
using System.Globalization;
using Microsoft.Extensions.Options;

namespace PriorityAsync.Hosting.Internal;

/// <summary>
/// Validates every named <see cref="PriorityWorkerOptions"/>. Each failure names the configuration key, the value and the valid range,
/// so that a host that refuses to start says exactly what to fix.
/// </summary>
internal sealed class PriorityWorkerOptionsValidator : IValidateOptions<PriorityWorkerOptions>
{
    public ValidateOptionsResult Validate(string? name, PriorityWorkerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        string section = $"{PriorityWorkerOptions.WorkersSection}:{name}";
        List<string>? failures = null;

        if (options.Levels is < PriorityContextOptions.MinLevels or > PriorityContextOptions.MaxLevels)
        {
            Fail(ref failures, section, nameof(options.Levels), Format(options.Levels), $"between {PriorityContextOptions.MinLevels} and {PriorityContextOptions.MaxLevels}");
        }
        else if (options.DefaultLevel < 0 || options.DefaultLevel >= options.Levels)
        {
            Fail(ref failures, section, nameof(options.DefaultLevel), Format(options.DefaultLevel), $"between 0 and {options.Levels - 1} (Levels is {options.Levels})");
        }

        if (options.StallTimeout is { } stall && (stall < PriorityContextOptions.MinStallTimeout || stall > PriorityContextOptions.MaxStallTimeout))
        {
            Fail(ref failures, section, nameof(options.StallTimeout), Format(stall), $"empty (off) or between {Format(PriorityContextOptions.MinStallTimeout)} and {Format(PriorityContextOptions.MaxStallTimeout)}");
        }

        if (options.BacklogDegradedThreshold is < 1)
        {
            Fail(ref failures, section, nameof(options.BacklogDegradedThreshold), Format(options.BacklogDegradedThreshold.Value), $"empty (off) or between 1 and {PriorityWorkerOptions.MaxBacklogDegradedThreshold}");
        }

        if (options.WorkDroppedLogInterval < PriorityWorkerOptions.MinWorkDroppedLogInterval || options.WorkDroppedLogInterval > PriorityWorkerOptions.MaxWorkDroppedLogInterval)
        {
            Fail(ref failures, section, nameof(options.WorkDroppedLogInterval), Format(options.WorkDroppedLogInterval), $"between {Format(PriorityWorkerOptions.MinWorkDroppedLogInterval)} and {Format(PriorityWorkerOptions.MaxWorkDroppedLogInterval)}");
        }

        if (options.IdleSpinCount is < 0 or > PriorityContextOptions.MaxIdleSpinCount)
        {
            Fail(ref failures, section, nameof(options.IdleSpinCount), Format(options.IdleSpinCount), $"between 0 and {PriorityContextOptions.MaxIdleSpinCount}");
        }

        if (options.TimeSlice is { } slice && (slice < PriorityContextOptions.MinTimeSlice || slice > PriorityContextOptions.MaxTimeSlice))
        {
            Fail(ref failures, section, nameof(options.TimeSlice), Format(slice), $"empty (no quota) or between {Format(PriorityContextOptions.MinTimeSlice)} and {Format(PriorityContextOptions.MaxTimeSlice)}");
        }

        int threads = options.ThreadCount ?? Environment.ProcessorCount;
        if (options.ThreadCount is < 1 or > PriorityThreadPoolOptions.MaxThreadCount)
        {
            Fail(ref failures, section, nameof(options.ThreadCount), Format(options.ThreadCount.Value), $"empty (one thread per core) or between 1 and {PriorityThreadPoolOptions.MaxThreadCount}");
        }
        else if (options.MaxConcurrencyPerLevel is { } caps)
        {
            if (caps.Count != options.Levels)
            {
                Fail(ref failures, section, nameof(options.MaxConcurrencyPerLevel), $"{caps.Count} values", $"empty (no cap) or one value per level: {options.Levels} values (Levels is {options.Levels})");
            }

            for (int level = 0; level < caps.Count; level++)
            {
                if (caps[level] < 1 || caps[level] > threads)
                {
                    Fail(ref failures, section, $"{nameof(options.MaxConcurrencyPerLevel)}:{level}", Format(caps[level]), $"between 1 and {threads} (the thread count)");
                }
            }
        }

        int perLevel = options.Policy switch
        {
            AgingPriorityPolicy aging => aging.MaxWaitPerLevel.Count,
            WeightedSharesPriorityPolicy shares => shares.SharesPerLevel.Count,
            _ => 0,
        };
        if (options.Policy is null)
        {
            Fail(ref failures, section, nameof(options.Policy), "null", $"a PriorityPolicy (the default is {PriorityPolicy.Strict})");
        }
        else if (perLevel != 0 && perLevel != options.Levels)
        {
            Fail(ref failures, section, nameof(options.Policy), options.Policy.ToString()!, $"a policy with one value per level: {options.Levels} values (Levels is {options.Levels}), not {perLevel}");
        }

        return failures is null ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void Fail(ref List<string>? failures, string section, string key, string value, string range)
        => (failures ??= []).Add($"{section}:{key} is {value}; it must be {range}.");

    private static string Format(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);
}
