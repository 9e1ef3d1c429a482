using System;

namespace PriorityAsync.Hosting.Internal;

/// <summary>A worker's scheduler options from its <see cref="PriorityWorkerOptions"/>: the shared settings as given, the name and the
/// clock as the worker's registration says (its name and the container's clock, unless the options set their own).</summary>
internal static class WorkerSchedulerOptions
{
    public static PriorityContextOptions ForContext(PriorityWorkerOptions options, string name, TimeProvider registered) =>
        Apply(new PriorityContextOptions(), options, name, registered);

    public static PriorityThreadPoolOptions ForPool(PriorityWorkerOptions options, string name, TimeProvider registered)
    {
        PriorityThreadPoolOptions pool = Apply(new PriorityThreadPoolOptions(), options, name, registered);
        pool.ThreadCount = options.ThreadCount ?? Environment.ProcessorCount;
        pool.MaxConcurrencyPerLevel = options.MaxConcurrencyPerLevel;
        return pool;
    }

    private static T Apply<T>(T target, PriorityWorkerOptions options, string name, TimeProvider registered)
        where T : PrioritySchedulerOptions
    {
        target.Levels = options.Levels;
        target.DefaultLevel = options.DefaultLevel;
        target.Name = options.Name ?? name;
        target.IdleSpinCount = options.IdleSpinCount;
        target.StallTimeout = options.StallTimeout;
        target.TimeSlice = options.TimeSlice;
        target.Policy = options.Policy;
        target.TimeProvider = ReferenceEquals(options.TimeProvider, TimeProvider.System) ? registered : options.TimeProvider;
        return target;
    }
}
