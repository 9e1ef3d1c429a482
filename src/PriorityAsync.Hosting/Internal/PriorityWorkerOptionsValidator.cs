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

        // The settings every scheduler takes, and the pool's, checked once, by the core's own options; their paths as configuration
        // keys ("MaxConcurrencyPerLevel:1").
        foreach (string error in WorkerSchedulerOptions.ForPool(options, name ?? string.Empty, TimeProvider.System).Validate())
        {
            (failures ??= []).Add($"{section}:{error.Replace("[", ":", StringComparison.Ordinal).Replace("]", string.Empty, StringComparison.Ordinal)}");
        }

        if (options.BacklogDegradedThreshold is < 1)
        {
            Fail(ref failures, section, nameof(options.BacklogDegradedThreshold), Format(options.BacklogDegradedThreshold.Value), $"null (off) or between 1 and {PriorityWorkerOptions.MaxBacklogDegradedThreshold}");
        }

        if (options.WorkDroppedLogInterval < PriorityWorkerOptions.MinWorkDroppedLogInterval || options.WorkDroppedLogInterval > PriorityWorkerOptions.MaxWorkDroppedLogInterval)
        {
            Fail(ref failures, section, nameof(options.WorkDroppedLogInterval), Format(options.WorkDroppedLogInterval), $"between {Format(PriorityWorkerOptions.MinWorkDroppedLogInterval)} and {Format(PriorityWorkerOptions.MaxWorkDroppedLogInterval)}");
        }

        return failures is null ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void Fail(ref List<string>? failures, string section, string key, string value, string range)
        => (failures ??= []).Add($"{section}:{key} is {value}; it must be {range}.");

    private static string Format(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Format(TimeSpan value) => value.ToString("c", CultureInfo.InvariantCulture);
}
