using System.Threading.Channels;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using Nito.AsyncEx;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// Ping-pong between two async loops (seed 004's channel benchmark): ping writes a token and waits for it to come back; pong
/// waits for it and writes it back. One hop = one message that resumes the other loop. On a single-threaded context the two loops
/// use <see cref="LoopChannel{T}"/> (a lock-free, allocation-free channel for one thread; every wake-up is a Post of the state
/// machine's continuation to the captured context). The thread-pool baseline uses two unbounded SPSC <see cref="Channel{T}"/>.
/// </summary>
/// <remarks>Each invocation runs <see cref="Rounds"/> round trips (2 x Rounds hops) inside a fresh context.</remarks>
[BenchmarkCategory("PingPong")]
public class PingPongBenchmarks
{
    public const int Rounds = 10_000;

    [Benchmark(OperationsPerInvoke = 2 * Rounds, Description = "PriorityAsync: two loops, LoopChannel")]
    public void PriorityAsync_PingPong() =>
        PriorityContext.Run(static () => PingPongOnContext(), new PriorityContextOptions { Levels = 3 });

    [Benchmark(Baseline = true, OperationsPerInvoke = 2 * Rounds, Description = "Thread pool: two tasks, Channel<T> SPSC")]
    public void ThreadPool_ChannelPingPong()
    {
        var options = new UnboundedChannelOptions { SingleReader = true, SingleWriter = true };
        Channel<int> toPong = Channel.CreateUnbounded<int>(options);
        Channel<int> toPing = Channel.CreateUnbounded<int>(options);
        Task ping = Task.Run(async () =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                toPong.Writer.TryWrite(i);
                await toPing.Reader.ReadAsync().ConfigureAwait(false);
            }
        });
        Task pong = Task.Run(async () =>
        {
            for (int i = 0; i < Rounds; i++)
            {
                int token = await toPong.Reader.ReadAsync().ConfigureAwait(false);
                toPing.Writer.TryWrite(token);
            }
        });
        Task.WaitAll(ping, pong);
    }

    [Benchmark(OperationsPerInvoke = 2 * Rounds, Description = "AsyncContext: two loops, LoopChannel")]
    public void AsyncContext_PingPong() => AsyncContext.Run(static () => PingPongOnContext());

    private static Task PingPongOnContext()
    {
        var toPong = new LoopChannel<int>();
        var toPing = new LoopChannel<int>();
        return Task.WhenAll(Ping(toPong, toPing), Pong(toPong, toPing));
    }

    private static async Task Ping(LoopChannel<int> toPong, LoopChannel<int> toPing)
    {
        for (int i = 0; i < Rounds; i++)
        {
            toPong.Write(i);
            await toPing.ReadAsync();
        }
    }

    private static async Task Pong(LoopChannel<int> toPong, LoopChannel<int> toPing)
    {
        for (int i = 0; i < Rounds; i++)
        {
            int token = await toPong.ReadAsync();
            toPing.Write(token);
        }
    }
}
