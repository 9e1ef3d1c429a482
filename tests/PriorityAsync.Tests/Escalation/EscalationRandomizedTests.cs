using System.Collections.Concurrent;
using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;
using PriorityAsync.Tests.Reliability;
using Xunit.Abstractions;
using static PriorityAsync.Priority;

namespace PriorityAsync.Tests.Escalation;

/// <summary>
/// Seeded rounds that escalate, de-escalate, cancel and time out lock waits, and end the scheduler mid-escalation while producers post:
/// works at random levels run random scripts (yields, level changes, delays, locks held across steps, waits on earlier works, which
/// raise them), on a loop or a pool. Asserted: no step and no posted item runs twice; every posted item ran or was reported dropped;
/// every task the library returned completed, within a bound, after the end; after a graceful end every step ran and no lock is held.
/// A failing round prints its seed; <c>PRIORITYASYNC_ESCALATION_REPLAY=kind:seed</c> runs that round alone.
/// </summary>
public class EscalationRandomizedTests(ITestOutputHelper output)
{
    private const string ReplayVariable = "PRIORITYASYNC_ESCALATION_REPLAY";

    public static TheoryData<string, int> Seeds()
    {
        var data = new TheoryData<string, int>();
        foreach (string kind in new[] { "loop", "pool" })
        {
            for (int seed = 1; seed <= 12; seed++)
            {
                data.Add(kind, seed);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public async Task Round_FixedSeed_NothingRunsTwiceNothingIsLostEveryTaskCompletes(string kind, int seed)
    {
        if (Environment.GetEnvironmentVariable(ReplayVariable) is { Length: > 0 } replay)
        {
            string[] parts = replay.Split(':');
            (kind, seed) = (parts[0], int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture));
        }

        long raised = await new Round(kind, seed).RunAsync();
        output.WriteLine($"{kind} seed {seed}: {raised} escalations");
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("pool")]
    public async Task Rounds_FixedSeeds_RaiseWork(string kind)
    {
        // What makes the rounds above meaningful: their scripts do raise work (joins of pending work, contended locks).
        long raised = 0;
        for (int seed = 1; seed <= 12; seed++)
        {
            raised += await new Round(kind, seed).RunAsync();
        }

        raised.Should().BePositive();
    }

    [Fact]
    [Trait("Category", "Stress")]
    public async Task Rounds_ForTheStressBudget_NothingRunsTwiceNothingIsLostEveryTaskCompletes()
    {
        var stopwatch = Stopwatch.StartNew();
        int rounds = 0;
        long raised = 0;
        int seed = Environment.TickCount & 0xFFFFF;
        while (stopwatch.Elapsed < StressSettings.Fraction(0.5))
        {
            seed++;
            raised += await new Round(rounds % 2 == 0 ? "loop" : "pool", seed).RunAsync();
            rounds++;
        }

        output.WriteLine($"{rounds} rounds, {raised} escalations, in {stopwatch.Elapsed.TotalSeconds:F1} s (seeds up to {seed})");
        rounds.Should().BePositive();
        raised.Should().BePositive();
    }

    private sealed class Round(string kind, int seed)
    {
        private const int Levels = 4;
        private readonly Random _random = new(seed);
        private readonly ConcurrentDictionary<string, int> _stepRuns = new();
        private readonly ConcurrentDictionary<int, int> _itemRuns = new();
        private readonly ConcurrentDictionary<int, int> _itemDrops = new();
        private readonly PriorityLock[] _locks = [new() { Name = "a" }, new() { Name = "b" }];
        private readonly PrioritySemaphore _semaphore = new(2, 2) { Name = "s" };
        private readonly List<(PriorityTask Task, int Steps)> _works = [];
        private int _posted;

        private string Replay => $"kind {kind}, seed {seed} (replay: {ReplayVariable}={kind}:{seed})";

        /// <summary>Runs the round and returns how many escalations it made.</summary>
        public async Task<long> RunAsync()
        {
            bool fault = _random.Next(3) == 0;
            PriorityContextThread? loop = kind == "loop" ? new PriorityContextThread(new PriorityContextOptions { Levels = Levels, Name = "random" }) : null;
            PriorityScheduler scheduler = loop is not null
                ? loop.Context
                : new PriorityThreadPool(new PriorityThreadPoolOptions { Levels = Levels, ThreadCount = 2, Name = "random" });
            var unexpected = new ConcurrentQueue<Exception>();
            scheduler.WorkDropped += (_, e) =>
            {
                if (e.State is ItemState item)
                {
                    _itemDrops.AddOrUpdate(item.Id, 1, (_, count) => count + 1);
                }
            };
            scheduler.UnhandledException += (_, e) =>
            {
                if (e.Exception is not InvalidOperationException { Message: "the round's fault" })
                {
                    unexpected.Enqueue(e.Exception); // asserted below; handled, so the round goes on and shows everything
                    e.Handled = true;
                }
            };

            using var stop = new CancellationTokenSource();
            Task producer = Task.Run(() => Produce(scheduler, stop.Token));
            int works = 6 + _random.Next(6);
            for (int i = 0; i < works; i++)
            {
                int id = i;
                int level = _random.Next(Levels);
                int[] script = Enumerable.Range(0, 3 + _random.Next(5)).Select(_ => _random.Next(100)).ToArray();
                int[] earlier = Enumerable.Range(0, id).Where(_ => _random.Next(3) == 0).ToArray();
                lock (_works)
                {
                    _works.Add((scheduler.InvokeAsync(() => ScriptAsync(scheduler, id, script, earlier), level), script.Length));
                }
            }

            if (fault)
            {
                await Task.Delay(_random.Next(3));
                scheduler.GetSynchronizationContext(_random.Next(Levels)).Post(_ => throw new InvalidOperationException("the round's fault"), null);
            }

            (PriorityTask Task, int Steps)[] all;
            lock (_works)
            {
                all = [.. _works];
            }

            // Every task the library returned completes, whatever the end: ran, faulted or cancelled.
            Task everything = Task.WhenAll(all.Select(work => work.Task.Task));
            try
            {
                await everything.WithTimeout($"every work's task ({Replay})");
            }
            catch (Exception) when (everything.IsCompleted)
            {
                // Faulted works (the round's fault ended the scheduler under them) are checked below.
            }

            stop.Cancel();
            await producer.WithTimeout($"the producer ({Replay})");
            await End(scheduler, loop);
            unexpected.Should().BeEmpty(Replay);

            foreach ((string step, int runs) in _stepRuns)
            {
                runs.Should().Be(1, $"step {step} ran {runs} times ({Replay})");
            }

            for (int id = 0; id < _posted; id++)
            {
                int ran = _itemRuns.GetValueOrDefault(id);
                int dropped = _itemDrops.GetValueOrDefault(id);
                (ran + dropped).Should().Be(1, $"posted item {id} ran {ran} times and was dropped {dropped} times ({Replay})");
            }

            if (!fault)
            {
                foreach ((PriorityTask task, int steps) in all)
                {
                    task.Task.Status.Should().Be(TaskStatus.RanToCompletion, $"a graceful round ends every work ({Replay}): {task.Task.Exception}");
                }

                _stepRuns.Count.Should().Be(all.Sum(work => work.Steps), $"every step ran ({Replay})");
                _locks.Should().AllSatisfy(lk => lk.IsHeld.Should().BeFalse($"no lock is left held ({Replay})"));
                _semaphore.CurrentCount.Should().Be(2, $"no permit is left taken ({Replay})");
            }
            else
            {
                all.Should().AllSatisfy(work => work.Task.Task.IsCompleted.Should().BeTrue(Replay));
            }

            return scheduler.EscalationCount;
        }

        private async Task ScriptAsync(PriorityScheduler scheduler, int id, int[] script, int[] earlier)
        {
            PriorityLock.Releaser? holding = null;
            bool semaphore = false;
            for (int step = 0; step < script.Length; step++)
            {
                _stepRuns.AddOrUpdate($"{id}.{step}", 1, (_, runs) => runs + 1);
                int roll = script[step];
                if (holding is null && !semaphore && roll < 15 && earlier.Length > 0)
                {
                    await Join(earlier[roll % earlier.Length]); // raises the earlier work (acyclic: only earlier ones)
                }
                else if (roll < 30)
                {
                    await Yield();
                }
                else if (roll < 40)
                {
                    await Prioritize(roll % Levels);
                }
                else if (roll < 50)
                {
                    await Delay(TimeSpan.FromMilliseconds(roll % 2));
                }
                else if (roll < 70 && holding is null && !semaphore)
                {
                    holding = await TakeLockAsync(roll);
                }
                else if (roll < 80 && holding is null && !semaphore)
                {
                    semaphore = await _semaphore.WaitAsync(TimeSpan.FromMilliseconds(roll % 3));
                }
                else if (holding is { } held)
                {
                    held.Dispose();
                    holding = null;
                }
                else if (semaphore)
                {
                    _semaphore.Release();
                    semaphore = false;
                }
                else
                {
                    Thread.SpinWait(50 + roll);
                }
            }

            holding?.Dispose();
            if (semaphore)
            {
                _semaphore.Release();
            }

            Task Join(int earlierId)
            {
                PriorityTask earlierTask;
                lock (_works)
                {
                    earlierTask = _works[earlierId].Task;
                }

                return AwaitQuietly(earlierTask);
            }
        }

        private async Task<PriorityLock.Releaser?> TakeLockAsync(int roll)
        {
            PriorityLock lk = _locks[roll % 2];
            if (roll % 3 != 0)
            {
                return await lk.LockAsync();
            }

            using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(roll % 2)); // a wait that may be cancelled
            try
            {
                return await lk.LockAsync(cancel.Token);
            }
            catch (OperationCanceledException)
            {
                return null;
            }
        }

        private static async Task AwaitQuietly(PriorityTask task)
        {
            try
            {
                await task; // the join
            }
            catch (Exception)
            {
                // An earlier work that faulted with the round's end: its failure is that work's, checked there.
            }
        }

        private void Produce(PriorityScheduler scheduler, CancellationToken stop)
        {
            var random = new Random(seed * 31);
            while (!stop.IsCancellationRequested)
            {
                int id = Interlocked.Increment(ref _posted) - 1;
                scheduler.GetSynchronizationContext(random.Next(Levels)).Post(
                    static state =>
                    {
                        var item = (ItemState)state!;
                        item.Round._itemRuns.AddOrUpdate(item.Id, 1, (_, runs) => runs + 1);
                    },
                    new ItemState(this, id));
                if (random.Next(8) == 0)
                {
                    Thread.Yield();
                }
            }
        }

        private static async Task End(PriorityScheduler scheduler, PriorityContextThread? loop)
        {
            Task ended = loop is not null ? loop.DisposeAsync().AsTask() : ((PriorityThreadPool)scheduler).DisposeAsync().AsTask();
            try
            {
                await ended.WithTimeout("the scheduler's end");
            }
            catch (InvalidOperationException ex) when (ex.Message == "the round's fault")
            {
                // The round's fault: it is what ended the scheduler.
            }
        }

        private sealed record ItemState(Round Round, int Id);
    }
}
