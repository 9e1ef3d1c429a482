namespace SocketCompletions;

/// <summary>What one phase of a child process measured. Lateness is in milliseconds.</summary>
/// <param name="Inline">Whether the child ran with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1.</param>
/// <param name="Scenario">The child's starvation scenario: <c>blocked</c> or <c>flood</c>.</param>
/// <param name="Phase"><c>healthy</c> or <c>starved</c>.</param>
/// <param name="Replies">Replies received in the phase.</param>
/// <param name="Pending">Of those, receives that were pending (completed through the socket engine; lateness is over these).</param>
/// <param name="OffLoop">Continuations that ran on another thread than the loop's (must be 0).</param>
/// <param name="DuringStarvation">Pending replies whose continuation ran on the loop before the pool was released (flood only; -1 otherwise).</param>
/// <param name="P50">Median lateness.</param>
/// <param name="P90">90th percentile.</param>
/// <param name="P99">99th percentile.</param>
/// <param name="Max">Worst lateness.</param>
/// <param name="PoolThreads">ThreadPool.ThreadCount at the end of the phase (threads injected show here).</param>
/// <param name="StarvedSeconds">How long the pool was starved in the phase (0 when healthy; the whole phase for <c>blocked</c>).</param>
internal sealed record PhaseResult(
    bool Inline,
    string Scenario,
    string Phase,
    int Replies,
    int Pending,
    int OffLoop,
    int DuringStarvation,
    double P50,
    double P90,
    double P99,
    double Max,
    int PoolThreads,
    double StarvedSeconds);
