using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace HostedWorker;

/// <summary>The sample's command line. Durations are in milliseconds.</summary>
public sealed class WorkerSettings
{
    public const string Usage =
        "usage: HostedWorker [--messages N] [--work-ms N] [--checkpoint-ms N] [--concurrency N] [--lease-ms N] [--renew-ms N] [--latency-ms N] [--progress-every N]";

    public int Messages { get; private set; } = 200;

    public TimeSpan Work { get; private set; } = TimeSpan.FromMilliseconds(40);

    public TimeSpan Checkpoint { get; private set; } = TimeSpan.FromMilliseconds(5);

    public int Concurrency { get; private set; } = 4;

    public TimeSpan LeaseDuration { get; private set; } = TimeSpan.FromSeconds(2);

    public TimeSpan RenewInterval { get; private set; } = TimeSpan.FromMilliseconds(500);

    public TimeSpan Latency { get; private set; } = TimeSpan.FromMilliseconds(2);

    public int ProgressEvery { get; private set; } = 50;

    public static bool TryParse(string[] args, [NotNullWhen(true)] out WorkerSettings? settings, [NotNullWhen(false)] out string? error)
    {
        settings = new WorkerSettings();
        error = null;
        for (int i = 0; i < args.Length; i += 2)
        {
            string name = args[i];
            if (i + 1 >= args.Length || !int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int value))
            {
                error = $"{name} needs a whole number ≥ 0. {Usage}";
                break;
            }

            switch (name)
            {
                case "--messages": settings.Messages = value; break;
                case "--work-ms": settings.Work = TimeSpan.FromMilliseconds(value); break;
                case "--checkpoint-ms": settings.Checkpoint = TimeSpan.FromMilliseconds(value); break;
                case "--concurrency": settings.Concurrency = value; break;
                case "--lease-ms": settings.LeaseDuration = TimeSpan.FromMilliseconds(value); break;
                case "--renew-ms": settings.RenewInterval = TimeSpan.FromMilliseconds(value); break;
                case "--latency-ms": settings.Latency = TimeSpan.FromMilliseconds(value); break;
                case "--progress-every": settings.ProgressEvery = value; break;
                default: error = $"unknown option '{name}'. {Usage}"; break;
            }

            if (error is not null)
            {
                break;
            }
        }

        error ??= settings switch
        {
            { Concurrency: < 1 } => $"--concurrency is {settings.Concurrency}; it must be at least 1.",
            { Checkpoint.TotalMilliseconds: < 1 } => $"--checkpoint-ms is {settings.Checkpoint.TotalMilliseconds}; it must be at least 1.",
            { RenewInterval.TotalMilliseconds: < 1 } => $"--renew-ms is {settings.RenewInterval.TotalMilliseconds}; it must be at least 1.",
            { ProgressEvery: < 1 } => $"--progress-every is {settings.ProgressEvery}; it must be at least 1.",
            _ when settings.LeaseDuration <= settings.RenewInterval + settings.Latency =>
                $"--lease-ms ({settings.LeaseDuration.TotalMilliseconds}) must be longer than --renew-ms plus --latency-ms ({(settings.RenewInterval + settings.Latency).TotalMilliseconds}).",
            _ => null,
        };
        if (error is not null)
        {
            settings = null;
            return false;
        }

        return true;
    }
}
