using System;

namespace LeaseWorker;

/// <summary>What the bus saw: the only source of the results (the worker never grades itself).</summary>
public sealed record BusTotals(int Received, int Succeeded, int Lost, int FailedRefreshes, int RejectedAcks, TimeSpan WorstRefreshLateness);
