namespace PriorityAsync.Inspector;

/// <summary>One callback's observed runs over the window.</summary>
/// <param name="Sampled">Whether some of them were samples (the scheduler's rate was high): then the counts are of samples.</param>
internal sealed record CallbackStats(string Method, int Level, int Count, double TotalMs, double MaxMs, bool Sampled);
