namespace LeaseWorker;

/// <summary>The state of a leased message, as the bus records it.</summary>
public enum LeaseState
{
    Active,
    Completed,
    Lost,
}
