namespace MessageBus.Postgres.Internal;

/// <summary>
/// The queue's statements for one table. Every decision is one statement judged by the database's clock (<c>clock_timestamp()</c>,
/// read once per statement in a <c>FROM</c> item, so a statement never compares against two different "nows"), and the counters
/// live on the message's row, updated by the statement that decides: no counter row every worker would contend on.
/// </summary>
/// <remarks>
/// <para>Invariants the tests check:</para>
/// <list type="bullet">
/// <item>I1: a message is leased to at most one delivery at a time: a receive takes only a row that is not completed and whose lease
/// is absent or expired, under a row lock (<c>FOR UPDATE SKIP LOCKED</c>), and gives it a new token from a sequence.</item>
/// <item>I2: only the latest delivery's token, while its lease has not expired, can renew, complete or abandon; anything else changes
/// nothing but the counter of refusals.</item>
/// <item>I3: a message is completed at most once; a completion retried with the token that completed it reports success again and
/// counts nothing (a lost reply must not turn into duplicate work).</item>
/// </list>
/// </remarks>
internal sealed class QueueSql
{
    public QueueSql(string table)
    {
        string sequence = table + "_token_seq";

        // Concurrent processes may create the schema at once: CREATE ... IF NOT EXISTS races on the catalogs, so serialize on an
        // advisory lock named after the table.
        Schema = $"""
            SELECT pg_advisory_xact_lock(hashtext('priorityasync.queue.{table}'));
            CREATE TABLE IF NOT EXISTS {table} (
                id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                payload            text        NOT NULL,
                enqueued_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
                lease_owner        text        NULL,
                lease_token        bigint      NULL,
                lease_until        timestamptz NULL,
                delivery_count     integer     NOT NULL DEFAULT 0,
                redelivery_count   integer     NOT NULL DEFAULT 0,
                abandon_count      integer     NOT NULL DEFAULT 0,
                failed_renewals    integer     NOT NULL DEFAULT 0,
                rejected_completes integer     NOT NULL DEFAULT 0,
                completed_at       timestamptz NULL,
                completed_by       text        NULL
            );
            CREATE SEQUENCE IF NOT EXISTS {sequence};
            CREATE INDEX IF NOT EXISTS {table}_pending ON {table} (id) WHERE completed_at IS NULL;
            """;

        Enqueue = $"INSERT INTO {table} (payload) SELECT unnest(@payloads::text[])";

        // I1. The oldest message not completed and not under a current lease. A previous lease that is still set (not released by
        // an abandon) has expired: this delivery is a redelivery.
        Receive = $"""
            WITH clock AS (SELECT clock_timestamp() AS now),
            next AS (
                SELECT m.id
                FROM {table} AS m, clock
                WHERE m.completed_at IS NULL AND (m.lease_until IS NULL OR m.lease_until <= clock.now)
                ORDER BY m.id
                LIMIT 1
                FOR UPDATE OF m SKIP LOCKED)
            UPDATE {table} AS m
            SET lease_owner = @owner,
                lease_token = nextval('{sequence}'),
                lease_until = clock.now + @lease,
                delivery_count = m.delivery_count + 1,
                redelivery_count = m.redelivery_count + CASE WHEN m.lease_until IS NULL THEN 0 ELSE 1 END
            FROM next, clock
            WHERE m.id = next.id
            RETURNING m.id, m.payload, m.lease_token, m.lease_until, m.delivery_count
            """;

        // I2. "current" = this token, not completed, lease not expired, by one reading of the database's clock.
        const string Current = "m.lease_token = @token AND m.completed_at IS NULL AND m.lease_until > clock.now";

        // I2, for any number of leases in one statement (a worker's renewals of one interval), each pair judged on its own.
        const string CurrentPair = "m.lease_token = r.token AND m.completed_at IS NULL AND m.lease_until > clock.now";
        RenewMany = $"""
            UPDATE {table} AS m
            SET lease_until = CASE WHEN {CurrentPair} THEN clock.now + @lease ELSE m.lease_until END,
                failed_renewals = m.failed_renewals + CASE WHEN {CurrentPair} THEN 0 ELSE 1 END
            FROM (SELECT clock_timestamp() AS now) AS clock, unnest(@ids::bigint[], @tokens::bigint[]) AS r(id, token)
            WHERE m.id = r.id
            RETURNING m.id, {CurrentPair}
            """;

        // I2, I3. The RETURNING clause sees the new row: completed by this token, now or by an earlier attempt of the same call.
        Complete = $"""
            UPDATE {table} AS m
            SET completed_at = CASE WHEN {Current} THEN clock.now ELSE m.completed_at END,
                completed_by = CASE WHEN {Current} THEN m.lease_owner ELSE m.completed_by END,
                lease_until = CASE WHEN {Current} THEN NULL ELSE m.lease_until END,
                rejected_completes = m.rejected_completes
                    + CASE WHEN {Current} OR (m.completed_at IS NOT NULL AND m.lease_token = @token) THEN 0 ELSE 1 END
            FROM (SELECT clock_timestamp() AS now) AS clock
            WHERE m.id = @id
            RETURNING m.completed_at IS NOT NULL AND m.lease_token = @token
            """;

        // I2. Releasing sets lease_until to NULL, so the next receive counts a delivery, not a redelivery. A retry of an abandon that
        // was applied finds the lease released by the same token and reports success again without counting it twice.
        Abandon = $"""
            UPDATE {table} AS m
            SET lease_until = NULL,
                lease_owner = NULL,
                abandon_count = m.abandon_count + CASE WHEN m.lease_until IS NULL THEN 0 ELSE 1 END
            FROM (SELECT clock_timestamp() AS now) AS clock
            WHERE m.id = @id AND m.lease_token = @token AND m.completed_at IS NULL
              AND (m.lease_until IS NULL OR m.lease_until > clock.now)
            RETURNING true
            """;

        // In the order of BusCounts.
        Counts = $"""
            SELECT count(*),
                   coalesce(sum(delivery_count), 0),
                   coalesce(sum(greatest(delivery_count - 1, 0)), 0),
                   count(completed_at),
                   coalesce(sum(rejected_completes), 0),
                   coalesce(sum(failed_renewals), 0),
                   coalesce(sum(abandon_count), 0),
                   count(*) FILTER (WHERE completed_at IS NULL AND lease_until IS NOT NULL),
                   count(*) FILTER (WHERE completed_at IS NULL AND lease_until IS NULL),
                   coalesce(sum(redelivery_count), 0)
            FROM {table}
            """;

        Purge = $"TRUNCATE {table}";
        Drop = $"DROP TABLE IF EXISTS {table}; DROP SEQUENCE IF EXISTS {sequence}";
    }

    public string Schema { get; }

    public string Enqueue { get; }

    public string Receive { get; }

    public string RenewMany { get; }

    public string Complete { get; }

    public string Abandon { get; }

    public string Counts { get; }

    public string Purge { get; }

    public string Drop { get; }
}
