using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using Nito.AsyncEx;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Cross-thread ping-pong with the receiver parked between messages: the client takes a timestamp and hands a message over; the
/// receiver takes a timestamp as soon as it runs the message and acknowledges it; the client spins for the acknowledgement, then
/// sleeps 1 ms so the receiver parks again before the next message. The figure is the one-way wake-up latency (post to start of
/// the callback), reported as percentiles.
/// </summary>
public static class WakeupLatency
{
    private const string Group = "Wake-up";

    public static IEnumerable<HarnessResult> Run(int samples)
    {
        var results = new List<HarnessResult>
        {
            PriorityContextThreadVariant(samples),
            SemaphoreSlimVariant(samples),
            ManualResetEventSlimVariant(samples),
            AsyncContextThreadVariant(samples),
        };

        foreach (HarnessResult result in results)
        {
            Console.WriteLine($"{Group,-10} {result.Name,-48} p50 {result.P50Us,8:F1} us  p90 {result.P90Us,8:F1} us  p99 {result.P99Us,8:F1} us  max {result.MaxUs,9:F1} us  (n={result.Samples})");
        }

        return results;
    }

    private static HarnessResult PriorityContextThreadVariant(int samples)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "wake" });
        var probe = new Probe(samples);
        SynchronizationContext target = loop.Context.GetSynchronizationContext(2);
        SendOrPostCallback callback = static state => ((Probe)state!).Arrived();
        probe.Measure(() => target.Post(callback, probe));
        return HarnessResult.FromTicks(Group, "PriorityContextThread Post (loop parked)", probe.Latencies, samples, null);
    }

    private static HarnessResult SemaphoreSlimVariant(int samples)
    {
        var probe = new Probe(samples);
        using var semaphore = new SemaphoreSlim(0);
        var receiver = new Thread(() =>
        {
            for (int i = 0; i < samples + Probe.Warmup; i++)
            {
                semaphore.Wait();
                probe.Arrived();
            }
        })
        { IsBackground = true };
        receiver.Start();
        probe.Measure(() => semaphore.Release());
        receiver.Join();
        return HarnessResult.FromTicks(Group, "SemaphoreSlim Release -> Wait", probe.Latencies, samples, null);
    }

    private static HarnessResult ManualResetEventSlimVariant(int samples)
    {
        var probe = new Probe(samples);
        using var signal = new ManualResetEventSlim(false);
        var receiver = new Thread(() =>
        {
            for (int i = 0; i < samples + Probe.Warmup; i++)
            {
                signal.Wait();
                signal.Reset();
                probe.Arrived();
            }
        })
        { IsBackground = true };
        receiver.Start();
        probe.Measure(() => signal.Set());
        receiver.Join();
        return HarnessResult.FromTicks(Group, "ManualResetEventSlim Set -> Wait", probe.Latencies, samples, null);
    }

    private static HarnessResult AsyncContextThreadVariant(int samples)
    {
        using var loop = new AsyncContextThread();
        var probe = new Probe(samples);
        SynchronizationContext target = loop.Context.SynchronizationContext;
        SendOrPostCallback callback = static state => ((Probe)state!).Arrived();
        probe.Measure(() => target.Post(callback, probe));
        return HarnessResult.FromTicks(Group, "AsyncContextThread Post", probe.Latencies, samples, null);
    }

    private sealed class Probe(int samples)
    {
        public const int Warmup = 50;

        private long _sentAt;
        private int _acknowledged;
        private int _index = -Warmup;

        public long[] Latencies { get; } = new long[samples];

        public void Measure(Action send)
        {
            for (int i = 0; i < samples + Warmup; i++)
            {
                Thread.Sleep(1); // let the receiver spin out and park
                Volatile.Write(ref _acknowledged, 0);
                Volatile.Write(ref _sentAt, Stopwatch.GetTimestamp());
                send();
                var spinner = default(SpinWait);
                while (Volatile.Read(ref _acknowledged) == 0)
                {
                    spinner.SpinOnce(sleep1Threshold: -1);
                }
            }
        }

        public void Arrived()
        {
            long now = Stopwatch.GetTimestamp();
            if (_index >= 0)
            {
                Latencies[_index] = now - Volatile.Read(ref _sentAt);
            }

            _index++;
            Volatile.Write(ref _acknowledged, 1);
        }
    }
}
