using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading.Tasks;
using MessageBus;

namespace BrokerWorker.Bus;

/// <summary>
/// <c>--bus-cost</c>: how many receive + renew + complete cycles one process does per second with no work, through the sample's
/// <see cref="IMessageBus"/> (<see cref="LeaseQueueBus"/> over the broker's queue: its reconnection wrapper, lease objects and
/// renewal batching; PostgreSQL: a pooled connection per statement) and through a plain client loop running the very same
/// statements or scripts (<see cref="Broker.PlainCyclesAsync"/>). The difference is the sample's overhead.
/// </summary>
public static class BusCost
{
    /// <summary>Measures the in-memory bus, and with <paramref name="connection"/> the real broker's bus against its plain loop.</summary>
    public static async Task<int> RunAsync(Options options, string? connection, TextWriter output, TextWriter error)
    {
        TimeSpan lease = TimeSpan.FromSeconds(30);
        var rows = new List<(string Name, long Cycles, TimeSpan Elapsed)>();

        var memory = new InMemoryMessageBus();
        (long memoryCycles, TimeSpan memoryElapsed) = await CyclesAsync(memory, lease, options.BusCostDuration, () =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                memory.Enqueue("m");
            }
        });
        rows.Add(("in-memory bus (IMessageBus)", memoryCycles, memoryElapsed));

        if (connection is not null)
        {
            BrokerKind kind = BusFactory.Kind(options.Bus)!;
            string queueName = options.Queue + "_cost";
            await using Broker broker = BusFactory.Create(connection, options, queueName, "cost");
            string durability = "";
            bool measured = await BusFactory.TryAsync(
                async () =>
                {
                    // Enough messages that no loop runs dry. The two loops take turns, three rounds each on a refilled queue, and
                    // each keeps its best round: on a shared machine a round can lose the cores to something else.
                    string[] stock = new string[50_000];
                    Array.Fill(stock, "m");
                    (long Cycles, TimeSpan Elapsed) bestBus = (0, TimeSpan.FromSeconds(1)), bestPlain = (0, TimeSpan.FromSeconds(1));
                    for (int round = 0; round < 3; round++)
                    {
                        await broker.SetUpAsync(purge: true);
                        await broker.EnqueueAsync(stock);
                        bestBus = Best(bestBus, await CyclesAsync(broker.Bus, lease, options.BusCostDuration, refill: null));

                        await broker.SetUpAsync(purge: true);
                        await broker.EnqueueAsync(stock);
                        bestPlain = Best(bestPlain, await broker.PlainCyclesAsync(lease, options.BusCostDuration));
                    }

                    rows.Add(($"{kind.Name}, the sample's bus (LeaseQueueBus)", bestBus.Cycles, bestBus.Elapsed));
                    rows.Add(($"{kind.Name}, {broker.PlainLoop}", bestPlain.Cycles, bestPlain.Elapsed));
                    durability = await broker.DurabilityAsync();
                    await broker.DropAsync();
                },
                broker,
                $"measure the bus on the queue {queueName}",
                error);
            if (!measured)
            {
                return 2;
            }

            await output.WriteLineAsync(durability);
        }

        await output.WriteLineAsync($"receive + renew + complete with no work, one process, one loop, best of 3 rounds of {Format.Sec(options.BusCostDuration)}:");
        await output.WriteLineAsync();
        await output.WriteLineAsync("| bus | cycles/s | µs per cycle | vs plain loop |");
        await output.WriteLineAsync("|---|---|---|---|");
        double plain = rows.Count == 3 ? rows[2].Cycles / rows[2].Elapsed.TotalSeconds : 0;
        for (int i = 0; i < rows.Count; i++)
        {
            double perSecond = rows[i].Cycles / rows[i].Elapsed.TotalSeconds;
            string ratio = plain > 0 && i > 0 ? $"{plain / perSecond:0.00}x" : "";
            await output.WriteLineAsync($"| {rows[i].Name} | {perSecond:0} | {1e6 / perSecond:0.0} | {ratio} |");
        }

        return 0;
    }

    private static (long Cycles, TimeSpan Elapsed) Best((long Cycles, TimeSpan Elapsed) a, (long Cycles, TimeSpan Elapsed) b) =>
        a.Cycles / a.Elapsed.TotalSeconds >= b.Cycles / b.Elapsed.TotalSeconds ? a : b;

    private static async Task<(long Cycles, TimeSpan Elapsed)> CyclesAsync(IMessageBus bus, TimeSpan lease, TimeSpan duration, Action? refill)
    {
        refill?.Invoke();
        long cycles = 0;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            Lease? message = await bus.ReceiveAsync(lease);
            if (message is null)
            {
                if (refill is null)
                {
                    throw new InvalidOperationException("The bus ran dry during the measurement.");
                }

                refill();
                continue;
            }

            if (!await bus.RenewAsync(message, lease) || !await bus.CompleteAsync(message))
            {
                throw new InvalidOperationException($"A fresh lease was refused: message {message.MessageId}.");
            }

            cycles++;
        }

        return (cycles, Stopwatch.GetElapsedTime(start));
    }
}
