namespace MessageBus.Redis.Internal;

/// <summary>
/// The queue's Lua scripts, in BullMQ's manner: a message waits in a list, is moved to the active list by a receive that also sets
/// its lock key (the fencing token, with an expiry); renew, complete and abandon act only while the lock holds their token; a
/// stalled check moves messages whose lock expired back to the front of the waiting list. Each script runs atomically on the
/// server, and a lock's expiry is the server's decision (an expired key is gone for every later command).
/// </summary>
/// <remarks>
/// <para>Keys, all under the hash tag <c>{name}</c> so that one queue lives on one server (a cluster slot):
/// <c>{name}:wait</c> (list of ids, taken from the right), <c>{name}:active</c> (list of ids under a lock, possibly expired),
/// <c>{name}:lock:ID</c> (the current token, with the lease as its expiry), <c>{name}:msg:ID</c> (hash: payload, enq, dc the
/// delivery count, token, owner, done the token that completed it, rel the token that released it, stalled), <c>{name}:counts</c>
/// (hash of counters), <c>{name}:next-id</c> and <c>{name}:next-token</c> (counters), <c>{name}:stalled-check</c> (the guard that
/// lets one stalled check run per interval, whoever calls it).</para>
/// <para>Invariants the tests check:</para>
/// <list type="bullet">
/// <item>R1: a message not completed is in exactly one of the lists, wait or active; it is in active exactly from the receive
/// that locked it to its complete, its abandon or the stalled check that found its lock gone.</item>
/// <item>R2: only the token in the message's lock key, while that key lives, can renew, complete or abandon; anything else changes
/// nothing but the counter of refusals.</item>
/// <item>R3: a message is completed at most once; a completion (or abandon) retried with the token that did it reports success
/// again and counts nothing (a lost reply must not turn into duplicate work).</item>
/// </list>
/// </remarks>
internal static class QueueScripts
{
    // The server's clock in milliseconds, read once per script.
    private const string Now = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

    /// <summary>KEYS: next-id, wait, counts. ARGV: prefix, then the payloads. Returns how many were enqueued.</summary>
    public const string Enqueue = Now + """
        local p = ARGV[1]
        for i = 2, #ARGV do
          local id = redis.call('INCR', KEYS[1])
          redis.call('HSET', p .. ':msg:' .. id, 'payload', ARGV[i], 'enq', now, 'dc', 0)
          redis.call('LPUSH', KEYS[2], id)
        end
        redis.call('HINCRBY', KEYS[3], 'enqueued', #ARGV - 1)
        return #ARGV - 1
        """;

    /// <summary>
    /// KEYS: wait, active, next-token, counts. ARGV: prefix, lease (ms), owner. The oldest waiting message moves to active under a
    /// new token whose lock expires after the lease. Returns { id, payload, token, delivery count, lease end (server ms) } or nil.
    /// </summary>
    public const string Receive = Now + """
        local id = redis.call('RPOP', KEYS[1])
        if not id then return false end
        local p = ARGV[1]
        local msg = p .. ':msg:' .. id
        redis.call('LPUSH', KEYS[2], id)
        local token = redis.call('INCR', KEYS[3])
        redis.call('SET', p .. ':lock:' .. id, token, 'PX', ARGV[2])
        local dc = redis.call('HINCRBY', msg, 'dc', 1)
        redis.call('HSET', msg, 'token', token, 'owner', ARGV[3])
        redis.call('HINCRBY', KEYS[4], 'delivered', 1)
        if dc > 1 then
          redis.call('HINCRBY', KEYS[4], 'redelivered', 1)
          if redis.call('HDEL', msg, 'stalled') == 1 then redis.call('HINCRBY', KEYS[4], 'expired', 1) end
        end
        return { id, redis.call('HGET', msg, 'payload'), token, dc, now + tonumber(ARGV[2]) }
        """;

    /// <summary>
    /// KEYS: counts. ARGV: prefix, lease (ms), then pairs of id and token. Every lease whose lock still holds its token is extended
    /// to the lease from now; each other one is counted as a failed renewal. Returns { lease end (server ms), 1 or 0 per pair }.
    /// </summary>
    public const string Renew = Now + """
        local p = ARGV[1]
        local result = { now + tonumber(ARGV[2]) }
        for i = 3, #ARGV, 2 do
          local lock = p .. ':lock:' .. ARGV[i]
          if redis.call('GET', lock) == ARGV[i + 1] then
            redis.call('PEXPIRE', lock, ARGV[2])
            result[#result + 1] = 1
          else
            redis.call('HINCRBY', KEYS[1], 'failed', 1)
            result[#result + 1] = 0
          end
        end
        return result
        """;

    /// <summary>KEYS: active, counts. ARGV: prefix, id, token. Returns 1 if the message is completed by this token (now or before), else 0.</summary>
    public const string Complete = """
        local p = ARGV[1]
        local lock = p .. ':lock:' .. ARGV[2]
        local msg = p .. ':msg:' .. ARGV[2]
        if redis.call('GET', lock) == ARGV[3] then
          redis.call('DEL', lock)
          redis.call('LREM', KEYS[1], -1, ARGV[2])
          redis.call('HSET', msg, 'done', ARGV[3])
          redis.call('HINCRBY', KEYS[2], 'completed', 1)
          return 1
        end
        if redis.call('HGET', msg, 'done') == ARGV[3] then return 1 end
        redis.call('HINCRBY', KEYS[2], 'rejected', 1)
        return 0
        """;

    /// <summary>
    /// KEYS: wait, active, counts. ARGV: prefix, id, token. Releases the lock and puts the message first in line. Returns 1 if
    /// released by this token (now or before), else 0. Refusals are not counted (nothing was lost or duplicated).
    /// </summary>
    public const string Abandon = """
        local p = ARGV[1]
        local lock = p .. ':lock:' .. ARGV[2]
        local msg = p .. ':msg:' .. ARGV[2]
        if redis.call('GET', lock) == ARGV[3] then
          redis.call('DEL', lock)
          redis.call('LREM', KEYS[2], -1, ARGV[2])
          redis.call('RPUSH', KEYS[1], ARGV[2])
          redis.call('HSET', msg, 'rel', ARGV[3])
          redis.call('HINCRBY', KEYS[3], 'abandoned', 1)
          return 1
        end
        if redis.call('HGET', msg, 'rel') == ARGV[3] then return 1 end
        return 0
        """;

    /// <summary>
    /// KEYS: active, wait, stalled-check. ARGV: prefix, guard (ms; 0: always run). Moves every active message whose lock is gone
    /// (expired) to the front of the waiting list, marked so that its redelivery counts as an expired one. With a guard, runs only
    /// if no check ran within it (one check per interval for all the workers). Returns how many were moved, or -1 if skipped.
    /// </summary>
    public const string CheckStalled = """
        local p = ARGV[1]
        if tonumber(ARGV[2]) > 0 and not redis.call('SET', KEYS[3], 1, 'NX', 'PX', ARGV[2]) then return -1 end
        local ids = redis.call('LRANGE', KEYS[1], 0, -1)
        local moved = 0
        for _, id in ipairs(ids) do
          if redis.call('EXISTS', p .. ':lock:' .. id) == 0 then
            redis.call('LREM', KEYS[1], 1, id)
            redis.call('RPUSH', KEYS[2], id)
            redis.call('HSET', p .. ':msg:' .. id, 'stalled', 1)
            moved = moved + 1
          end
        end
        return moved
        """;

    /// <summary>KEYS: counts, wait, active. Returns the counters in the order of BusCounts.</summary>
    public const string Counts = """
        local c = redis.call('HMGET', KEYS[1], 'enqueued', 'delivered', 'redelivered', 'completed', 'rejected', 'failed', 'abandoned', 'expired')
        for i = 1, #c do c[i] = tonumber(c[i]) or 0 end
        return { c[1], c[2], c[3], c[4], c[5], c[6], c[7], redis.call('LLEN', KEYS[3]), redis.call('LLEN', KEYS[2]), c[8] }
        """;
}
