using System;

namespace LeaseWorker;

/// <summary>
/// The least time any scheduler could take for the whole run, with the durations as they run (scaled):
/// <code>
///   bound = max(work, chain)
///   work  = receive + messages x steps x cpu / threads + io + ack    (all CPU parts back to back on the threads that can run them,
///                                                                      after the first delivery, before the last I/O and ack)
///   chain = messages x receive + steps x (cpu + io) + ack             (the receive loop takes messages one after another, and the
///                                                                      last one still has all its steps to do)
/// </code>
/// One thread runs CPU work one part at a time (threads = 1). On the thread pool, spinning is limited by the cores; sleeping needs
/// no core, so only the chain bounds it. The bound counts every message as processed: a mode that loses messages can finish sooner.
/// </summary>
public static class LowerBound
{
    public static TimeSpan For(Settings settings, int? cpuThreads)
    {
        ArgumentNullException.ThrowIfNull(settings);
        TimeSpan receive = settings.Scaled(settings.Receive);
        TimeSpan cpu = settings.Scaled(settings.Cpu);
        TimeSpan io = settings.Scaled(settings.Io);
        TimeSpan ack = settings.Scaled(settings.RefreshDuration);
        long parts = (long)settings.Messages * settings.Steps;

        TimeSpan chain = settings.Messages * receive + settings.Steps * (cpu + io) + ack;
        if (cpuThreads is not { } threads)
        {
            return chain;
        }

        TimeSpan work = receive + TimeSpan.FromTicks(cpu.Ticks * parts / threads) + io + ack;
        return work > chain ? work : chain;
    }
}
