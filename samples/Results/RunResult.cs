using System;

namespace Results;

/// <summary>What one variant did with one number of calls. <see cref="Measured"/> is false for an extrapolated WhenAny row.</summary>
internal sealed record RunResult(
    Variant Variant,
    int Calls,
    int UrgentCalls,
    bool Measured,
    TimeSpan Total,
    TimeSpan LastUrgent,
    TimeSpan Cpu,
    long AllocatedBytes,
    int Processed,
    int NotProcessedExactlyOnce,
    int OvertakenUrgent)
{
    public double CpuMicrosecondsPerResult => Cpu.TotalMicroseconds / Calls;

    public double BytesPerResult => (double)AllocatedBytes / Calls;
}
