using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;
using Samples.Support;

namespace SocketCompletions;

/// <summary>
/// The child process: a priority loop sends requests to the loopback server and awaits each reply, first with the pool healthy,
/// then with it starved; it measures, for each reply, how long after the server sent it the awaiting method resumed on the loop.
/// </summary>
internal static class Probe
{
    private const int FloodItems = 4096;
    private static readonly TimeSpan s_phaseTimeout = TimeSpan.FromSeconds(60);

    public static IEnumerable<PhaseResult> Run(string scenario, int requests, TimeSpan starveFor)
    {
        bool inline = Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") == "1";
        using var server = new LoopbackServer();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "Socket probe" });
        TaskFactory level2 = loop.Context.GetTaskFactory(2);
        Wait(level2.StartNew(() => socket.ConnectAsync(server.EndPoint)).Unwrap(), "connect");

        // Warm-up (JIT, the socket engine, the server's first reply), not reported.
        Wait(level2.StartNew(() => ExchangeAsync(socket, loop.ManagedThreadId, 20, NotReleased())).Unwrap(), "warm-up");

        Samples healthy = Wait(level2.StartNew(() => ExchangeAsync(socket, loop.ManagedThreadId, requests, NotReleased())).Unwrap(), "healthy phase");
        yield return healthy.ToResult(inline, scenario, "healthy", -1, 0);

        var releasedAt = new StrongBox<long>(long.MaxValue);
        long starvedFrom = Stopwatch.GetTimestamp();
        PoolStarvation starvation = scenario == "flood" ? PoolStarvation.Flood(FloodItems) : PoolStarvation.BlockEveryThread();
        Task<Samples> starved = level2.StartNew(() => ExchangeAsync(socket, loop.ManagedThreadId, requests, releasedAt)).Unwrap();
        int duringStarvation = -1;
        if (scenario == "flood")
        {
            // The flood lasts until the requests are done or starveFor has passed. This thread is not a pool thread, and the
            // wait below is the task's own kernel event: nothing the controller does needs the pool.
            starved.Wait(starveFor);
            Volatile.Write(ref releasedAt.Value, Stopwatch.GetTimestamp());
            starvation.Release();
        }

        Samples result = Wait(starved, "starved phase");
        long end = Math.Min(Volatile.Read(ref releasedAt.Value), Stopwatch.GetTimestamp());
        if (scenario == "flood")
        {
            duringStarvation = result.BeforeRelease;
        }

        yield return result.ToResult(inline, scenario, "starved", duringStarvation, Stopwatch.GetElapsedTime(starvedFrom, end).TotalSeconds);

        // The "blocked" scenario's threads stay blocked (as a careless library leaves them); the process ends here.
        socket.Shutdown(SocketShutdown.Both);
        loop.Complete();
    }

    private static StrongBox<long> NotReleased() => new(long.MaxValue);

    private static T Wait<T>(Task<T> task, string what)
    {
        if (!task.Wait(s_phaseTimeout))
        {
            throw new TimeoutException($"The {what} did not finish within {s_phaseTimeout.TotalSeconds} s.");
        }

        return task.Result;
    }

    private static void Wait(Task task, string what)
    {
        if (!task.Wait(s_phaseTimeout))
        {
            throw new TimeoutException($"The {what} did not finish within {s_phaseTimeout.TotalSeconds} s.");
        }
    }

    // Runs on the loop at level 2. Stops early once the pool is released (flood), so a phase's figures are its own.
    private static async Task<Samples> ExchangeAsync(Socket socket, int loopThreadId, int requests, StrongBox<long> releasedAt)
    {
        var samples = new Samples(requests);
        byte[] request = new byte[8];
        byte[] reply = new byte[8];
        for (int i = 0; i < requests && Volatile.Read(ref releasedAt.Value) == long.MaxValue; i++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(request, i);
            await socket.SendAsync(request.AsMemory(), SocketFlags.None);
            int received = 0;
            bool pending = false;
            while (received < reply.Length)
            {
                ValueTask<int> receive = socket.ReceiveAsync(reply.AsMemory(received), SocketFlags.None);
                pending |= !receive.IsCompleted;
                int n = await receive;
                if (n == 0)
                {
                    throw new InvalidOperationException("The loopback server closed the connection.");
                }

                received += n;
            }

            long now = Stopwatch.GetTimestamp();
            long sentAt = BinaryPrimitives.ReadInt64LittleEndian(reply);
            samples.Add(pending, Environment.CurrentManagedThreadId == loopThreadId, now - sentAt, now < Volatile.Read(ref releasedAt.Value));
        }

        return samples;
    }

    private sealed class Samples(int capacity)
    {
        private readonly List<long> _lateness = new(capacity);
        private int _replies;
        private int _offLoop;

        public int BeforeRelease { get; private set; }

        public void Add(bool pending, bool onLoop, long latenessTicks, bool beforeRelease)
        {
            _replies++;
            if (!onLoop)
            {
                _offLoop++;
            }

            if (pending)
            {
                _lateness.Add(latenessTicks);
                if (beforeRelease)
                {
                    BeforeRelease++;
                }
            }
        }

        public PhaseResult ToResult(bool inline, string scenario, string phase, int duringStarvation, double starvedSeconds)
        {
            _lateness.Sort();
            return new PhaseResult(
                inline,
                scenario,
                phase,
                _replies,
                _lateness.Count,
                _offLoop,
                duringStarvation,
                Percentile(0.50),
                Percentile(0.90),
                Percentile(0.99),
                Percentile(1.0),
                ThreadPool.ThreadCount,
                starvedSeconds);
        }

        private double Percentile(double p)
        {
            if (_lateness.Count == 0)
            {
                return double.NaN;
            }

            int index = Math.Min(_lateness.Count - 1, (int)Math.Ceiling(p * _lateness.Count) - 1);
            return _lateness[Math.Max(0, index)] * 1000.0 / Stopwatch.Frequency;
        }
    }
}
