using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using PriorityAsync;
using static PriorityAsync.Priority;

namespace Results;

/// <summary>The five variants. Each makes every call, starts the network, and returns once every result was processed.</summary>
internal static class Variants
{
    /// <summary>Urgent results (a user waits for them) run at this level; prefetches at level 0; arriving responses at level 2.</summary>
    public const int UrgentLevel = 1;

    private const int ArrivalLevel = 2;

    public static string Name(Variant variant) => variant switch
    {
        Variant.OneByOne => "one by one",
        Variant.WhenAll => "WhenAll",
        Variant.WhenAnyLoop => "WhenAny loop",
        Variant.Packed => "packed (pool)",
        _ => "PriorityAsync",
    };

    public static void Run(Variant variant, SimulatedNetwork network, Recorder recorder)
    {
        if (variant == Variant.Priority)
        {
            RunPriority(network, recorder);
        }
        else
        {
            // The thread-pool variants start on this thread (no SynchronizationContext); their continuations run on the pool.
            RunOnThreadPoolAsync(variant, network, recorder).GetAwaiter().GetResult();
        }

        network.Join();
    }

    private static Task RunOnThreadPoolAsync(Variant variant, SimulatedNetwork network, Recorder recorder)
    {
        int n = network.Workload.Count;
        var calls = new Task<int>[n];
        for (int i = 0; i < n; i++)
        {
            calls[i] = network.Call(i);
        }

        network.Start(network.CompleteBatch); // the network thread completes each batch; continuations go to the pool
        return variant switch
        {
            Variant.OneByOne => OneByOneAsync(calls, recorder),
            Variant.WhenAll => WhenAllAsync(calls, recorder),
            Variant.WhenAnyLoop => WhenAnyLoopAsync(calls, recorder),
            _ => PackedAsync(calls, recorder),
        };
    }

    // 1. The seed's first approach: every call is made, then awaited in turn. A fast call's result waits for every slower call before it.
    private static async Task OneByOneAsync(Task<int>[] calls, Recorder recorder)
    {
        foreach (Task<int> call in calls)
        {
            recorder.Process(await call.ConfigureAwait(false));
        }
    }

    // 2. Task.WhenAll: nothing is processed until the slowest call is back.
    private static async Task WhenAllAsync(Task<int>[] calls, Recorder recorder)
    {
        int[] results = await Task.WhenAll(calls).ConfigureAwait(false);
        foreach (int result in results)
        {
            recorder.Process(result);
        }
    }

    // 3. "Process tasks as they complete": each lap registers a continuation on every call still pending and removes one from a
    //    list: O(n) per result, O(n^2) in total.
    private static async Task WhenAnyLoopAsync(Task<int>[] calls, Recorder recorder)
    {
        var pending = new List<Task<int>>(calls);
        while (pending.Count > 0)
        {
            Task<int> done = await Task.WhenAny(pending).ConfigureAwait(false);
            pending.Remove(done);
            recorder.Process(await done.ConfigureAwait(false));
        }
    }

    // 4. The seed's best: each call packed with its processing, all packs awaited together. Results are processed as they arrive,
    //    on as many pool threads as the pool gives, so the processing must be thread-safe, and nothing says which result goes first.
    private static Task PackedAsync(Task<int>[] calls, Recorder recorder)
    {
        var packs = new Task[calls.Length];
        for (int i = 0; i < calls.Length; i++)
        {
            packs[i] = ProcessWhenReadyAsync(calls[i], recorder);
        }

        return Task.WhenAll(packs);

        static async Task ProcessWhenReadyAsync(Task<int> call, Recorder recorder) => recorder.Process(await call.ConfigureAwait(false));
    }

    // 5. PriorityAsync: the same packing, on one thread with levels. Each call's continuation comes back at its own level, so when
    //    several responses are ready at once the urgent ones are processed first. No lock, no WhenAny, no list.
    private static void RunPriority(SimulatedNetwork network, Recorder recorder)
    {
        Workload workload = network.Workload;
        PriorityContext.Run(async () =>
        {
            var handlers = new Task[workload.Count];
            for (int i = 0; i < handlers.Length; i++)
            {
                handlers[i] = HandleAsync(network.Call(i), workload.IsUrgent[i] ? UrgentLevel : 0, recorder);
            }

            // The network's thread hands each batch to the loop, at the top level: the loop completes the batch's calls in one go, and
            // each completion posts its call's continuation to the level it awaited at.
            SynchronizationContext arrivals = PriorityContext.Current!.GetSynchronizationContext(ArrivalLevel);
            network.Start(batch => arrivals.Post(static state => ((Delivery)state!).Complete(), new Delivery(network, batch)));
            await Task.WhenAll(handlers);
        }, new PriorityContextOptions { Levels = 3, Name = "Results" });
    }

    private static async Task HandleAsync(Task<int> call, int level, Recorder recorder)
    {
        await Prioritize(level);              // from here on this handler is at its level; free when nothing above it waits
        recorder.Process(await call);         // the continuation is posted back at that level
    }

    private sealed record Delivery(SimulatedNetwork Network, int Batch)
    {
        public void Complete() => Network.CompleteBatch(Batch);
    }
}
