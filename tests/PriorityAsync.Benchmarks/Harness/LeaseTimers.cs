using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Benchmarks.Harness;

/// <summary>
/// Loop timers where the loop often goes idle (issue 22): a lease worker's I/O-heavy run, and the lateness of a timer on an idle loop.
/// Run with <c>--lease-timers</c>.
/// </summary>
/// <remarks>
/// <para>Makespan: <see cref="Messages"/> messages of <see cref="Steps"/> steps each, <see cref="InFlight"/> at a time on one
/// <see cref="PriorityContextThread"/> (the leases a worker holds: <see cref="InFlight"/>); a step is a CPU part (a spin of <see cref="CpuPart"/>) then an I/O
/// wait of twice that, no checkpoints. The I/O wait is <c>Priority.Delay</c> (the loop's own timers) or <c>Task.Delay</c> (the
/// runtime's timers, the continuation posted back to the loop), the two alternating run by run in this process. With two leases in
/// flight the loop goes idle in every cycle, so every bit of timer lateness shows in the makespan; with all in flight it never does.
/// The makespan is reported as a ratio to the CPU bound (all CPU parts back to back).</para>
/// <para>Idle lateness: on a parked loop, how long after its due time a <c>Priority.Delay</c> resumes the method (and the same for
/// <c>Task.Delay</c> awaited on the loop), for several delays.</para>
/// </remarks>
public static class LeaseTimers
{
    public const int Messages = 20;
    public const int Steps = 20;
    /// <summary>The leases held at once: 2 (the loop's CPU just covers the other lease's wait, so it often goes idle) and all 20.</summary>
    public static readonly int[] InFlight = [2, Messages];
    public static readonly TimeSpan CpuPart = TimeSpan.FromMilliseconds(1);

    public static void Run(int runs, System.IO.TextWriter output)
    {
        output.WriteLine($"== Loop timers on an I/O-heavy lease run: {Messages} messages x {Steps} steps, CPU part {CpuPart.TotalMilliseconds} ms, I/O twice that, no checkpoints; makespan / CPU bound, {runs} runs each, alternating ==");
        Makespan(loopTimers: true, InFlight[0]); // warm-up of both paths (JIT, the alarm thread, the runtime's timer thread)
        Makespan(loopTimers: false, InFlight[0]);
        foreach (int inFlight in InFlight)
        {
            var loopTimers = new List<double>();
            var taskDelay = new List<double>();
            for (int i = 0; i < runs; i++)
            {
                loopTimers.Add(Makespan(loopTimers: true, inFlight));
                taskDelay.Add(Makespan(loopTimers: false, inFlight));
            }

            double[] pairs = loopTimers.Zip(taskDelay, (a, b) => a / b).Order().ToArray();
            output.WriteLine(FormattableString.Invariant(
                $"{inFlight,2} in flight: Priority.Delay {Cell(loopTimers)}, Task.Delay {Cell(taskDelay)}; ratio {Median(loopTimers) / Median(taskDelay):F3} (pairs {pairs[0]:F3} .. {pairs[^1]:F3})"));
        }

        output.WriteLine("== A due timer on an idle (parked) loop: resumed after its due time by (us, 200 samples each: p50 / p90 / p99) ==");
        foreach (double ms in new[] { 1.0, 2.5, 10 })
        {
            (double[] loop, double[] task) = IdleLateness(TimeSpan.FromMilliseconds(ms), samples: 200);
            output.WriteLine(FormattableString.Invariant($"delay {ms} ms: Priority.Delay {Percentiles(loop)}; Task.Delay on the loop {Percentiles(task)}"));
        }
    }

    private static double Makespan(bool loopTimers, int inFlight)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "lease" });
        TimeSpan io = 2 * CpuPart;
        long start = Stopwatch.GetTimestamp();
        Task all = loop.Context.GetTaskFactory(1).StartNew(async () =>
        {
            int next = 0;
            var running = new List<Task>();
            while (next < Messages || running.Count > 0)
            {
                while (next < Messages && running.Count < inFlight)
                {
                    running.Add(Message(loopTimers, io));
                    next++;
                }

                running.Remove(await Task.WhenAny(running));
            }
        }).Unwrap();
        all.Wait();
        double elapsed = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        return elapsed / (Messages * Steps * CpuPart.TotalMilliseconds);
    }

    private static async Task Message(bool loopTimers, TimeSpan io)
    {
        for (int step = 0; step < Steps; step++)
        {
            Spin(CpuPart);
            if (loopTimers)
            {
                await Priority.Delay(io);
            }
            else
            {
#pragma warning disable PA0001 // the comparison: the pool's timer against the loop's
                await Task.Delay(io);
#pragma warning restore PA0001
            }
        }
    }

    private static void Spin(TimeSpan duration)
    {
        long end = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(10);
        }
    }

    private static (double[] Loop, double[] Task) IdleLateness(TimeSpan delay, int samples)
    {
        using var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "idle-timer" });
        var lateLoop = new double[samples];
        var lateTask = new double[samples];
        loop.Context.GetTaskFactory(0).StartNew(async () =>
        {
            for (int i = -10; i < samples; i++) // 10 warm-up samples
            {
                long start = Stopwatch.GetTimestamp();
                await Priority.Delay(delay);
                double late = (Stopwatch.GetElapsedTime(start) - delay).TotalMicroseconds;
                start = Stopwatch.GetTimestamp();
#pragma warning disable PA0001 // the comparison: the pool's timer against the loop's
                await Task.Delay(delay);
#pragma warning restore PA0001
                double lateT = (Stopwatch.GetElapsedTime(start) - delay).TotalMicroseconds;
                if (i >= 0)
                {
                    lateLoop[i] = late;
                    lateTask[i] = lateT;
                }
            }
        }).Unwrap().Wait();
        return (lateLoop, lateTask);
    }

    private static double Median(List<double> values) => Percentile(values.Order().ToArray(), 0.5);

    private static double Percentile(double[] sorted, double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];

    private static string Cell(List<double> values) => FormattableString.Invariant($"{Median(values):F3} [{values.Min():F3} .. {values.Max():F3}]");

    private static string Percentiles(double[] values)
    {
        double[] sorted = values.Order().ToArray();
        return FormattableString.Invariant($"{Percentile(sorted, 0.5):F0} / {Percentile(sorted, 0.9):F0} / {Percentile(sorted, 0.99):F0}");
    }
}
