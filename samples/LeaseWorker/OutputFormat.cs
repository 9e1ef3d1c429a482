namespace LeaseWorker;

/// <summary>The output format.</summary>
public enum OutputFormat
{
    Table,
    Json,
}
