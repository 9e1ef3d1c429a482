using System;

namespace LeaseWorker;

/// <summary>A message the bus delivered to the worker, with the bus's record of its lease. Only the bus changes it.</summary>
public sealed class Lease
{
    internal Lease(int id, TimeSpan deliveredAt, TimeSpan expiry)
    {
        Id = id;
        LastRenewal = deliveredAt;
        Expiry = expiry;
    }

    public int Id { get; }

    public LeaseState State { get; internal set; }

    internal TimeSpan Expiry { get; set; }

    internal TimeSpan LastRenewal { get; set; }

    internal int Renewals { get; set; }
}
