using MessageBus;

namespace MessageBus.Postgres;

/// <summary>Settings of a <see cref="PostgresLeaseQueue"/>: <see cref="LeaseQueueOptions.ConnectionString"/> is Npgsql's, and
/// <see cref="LeaseQueueOptions.QueueName"/> names the table (lower-case letters, digits and underscores, at most 40; the
/// fencing-token sequence is named after it). The connect timeout replaces the connection string's <c>Timeout</c>.</summary>
public sealed class PostgresLeaseQueueOptions : LeaseQueueOptions
{
}
