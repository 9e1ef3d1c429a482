using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.RegularExpressions;
using FsCheck;
using FsCheck.Fluent;
using PriorityAsync.Tests.Infrastructure;
using Xunit.Abstractions;

namespace PriorityAsync.Tests.Reliability.Model;

/// <summary>
/// Model-based tests (FsCheck): random sequences of operations (post a script at a level, cross-thread Send, cross-thread Prioritize,
/// async void that throws, nested awaits, Yield, Prioritize inside scripts, Complete, Dispose) run against a real loop and against
/// <see cref="ReferenceModel"/>.
/// <list type="bullet">
/// <item>One producer, with the loop held at a gate while the ops are queued: the whole log must equal the model's, in exact order.</item>
/// <item>Three producers racing a live loop (and Complete/Dispose): invariants only: every op ran exactly once or was dropped (posts) /
/// rejected with ObjectDisposedException (Send, Prioritize); FIFO per producer and level; every script's own trace (its records, in
/// order, at their levels) equals the model's trace of that script run alone; drops are counted.</item>
/// </list>
/// A failure prints the counterexample (shrunk for the single-producer property) and FsCheck's replay seed.
/// </summary>
public sealed class ModelBasedTests
{
    // Only the trailing call segments: "t0.9/c4/p1" (an item posted from inside call c4) is an item of its own, not part of "t0.9/p1".
    private static readonly Regex s_callSegment = new(@"(/c\d+)+$", RegexOptions.Compiled);

    /// <summary>Set to FsCheck's "seed,gamma" (printed with a failure) to replay that case: <c>PRIORITYASYNC_FSCHECK_REPLAY=123,456 dotnet test --filter ...</c>.</summary>
    public const string ReplayVariable = "PRIORITYASYNC_FSCHECK_REPLAY";

    [Fact]
    public void SingleProducer_RandomOps_LogEqualsModelExactly() =>
        Check.One(WithReplay(Config.QuickThrowOnFailure.WithMaxTest(100).WithEndSize(40)), Prop.ForAll(ScriptGen.SingleProducer, RunSingleProducer));

    [Fact]
    public void ThreeProducers_RandomOpsRacingTheLoop_InvariantsHold() =>
        Check.One(WithReplay(Config.QuickThrowOnFailure.WithMaxTest(25)), Prop.ForAll(ScriptGen.ThreePlans, RunThreeProducers));

    private static Config WithReplay(Config config)
    {
        string? replay = Environment.GetEnvironmentVariable(ReplayVariable);
        if (string.IsNullOrWhiteSpace(replay))
        {
            return config;
        }

        ulong[] parts = replay.Trim('(', ')', ' ').Split(',').Select(p => ulong.Parse(p.Trim(), System.Globalization.CultureInfo.InvariantCulture)).ToArray();
        var rnd = new Rnd(parts[0], parts[1]);
        Microsoft.FSharp.Core.FSharpOption<int> size = parts.Length > 2 ? (int)parts[2] : Microsoft.FSharp.Core.FSharpOption<int>.None;
        return config.WithReplay(new Replay(rnd, size));
    }

    /// <summary>Both properties for a share of the stress budget, with fresh seeds each round.</summary>
    internal static void StressRounds(ITestOutputHelper output)
    {
        var stopwatch = Stopwatch.StartNew();
        TimeSpan budget = StressSettings.Fraction(0.5);
        int rounds = 0;
        while (stopwatch.Elapsed < budget)
        {
            Check.One(Config.QuickThrowOnFailure.WithMaxTest(50).WithEndSize(40), Prop.ForAll(ScriptGen.SingleProducer, RunSingleProducer));
            Check.One(Config.QuickThrowOnFailure.WithMaxTest(10), Prop.ForAll(ScriptGen.ThreePlans, RunThreeProducers));
            rounds++;
        }

        output.WriteLine($"{rounds * 50} single-producer and {rounds * 10} three-producer cases in {stopwatch.Elapsed.TotalSeconds:F1} s");
    }

    // ---- One producer, exact order --------------------------------------------------------------------------------------------

    private static void RunSingleProducer(ScriptGen.OpList plan)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = ScriptGen.Levels, Name = "model" });
        PriorityContext context = loop.Context;
        var runner = new RealRunner(context);
        int dropEvents = 0;
        context.WorkDropped += (_, _) => Interlocked.Increment(ref dropEvents);
        var model = new ReferenceModel(ScriptGen.Levels);

        // Hold the loop at a gate (an item at level 0, whose stale bit the model mirrors) while the ops are queued.
        using var gate = new ManualResetEventSlim(false);
        using var gated = new ManualResetEventSlim(false);
        context.GetSynchronizationContext(0).Post(_ =>
        {
            gated.Set();
            gate.Wait(TestTimeout.Unexpected);
        }, null);
        gated.WaitOrFail("the gate item to run");
        model.SetStaleBit(0);

        var helpers = new List<Task>();
        bool late = false;
        int expectedDrops = 0;
        try
        {
            for (int i = 0; i < plan.Ops.Count; i++)
            {
                string id = $"t0.{i}";
                switch (plan.Ops[i])
                {
                    case Op.PostScript post:
                        context.GetSynchronizationContext(post.Level).Post(RealRunner.StartCallback, runner.CreateStarter(id, post));
                        if (late)
                        {
                            expectedDrops++;
                        }
                        else
                        {
                            model.PostTopLevel(id, post);
                        }

                        break;
                    case Op.Send send when late:
                        Action lateSend = () => context.GetSynchronizationContext(send.Level).Send(_ => runner.Log.Add("late send ran"), null);
                        lateSend.Should().Throw<ObjectDisposedException>();
                        break;
                    case Op.Send send:
                        // Blocks its thread until the loop runs it; wait until it is queued so the order stays deterministic.
                        helpers.Add(QueueAndWait(context, send.Level, () => Task.Run(() =>
                            context.GetSynchronizationContext(send.Level).Send(_ => runner.Log.Add($"{id}:send@{PriorityContext.CurrentLevel}"), null))));
                        model.PostTopLevel(id, LogOnly(send.Level));
                        break;
                    case Op.Hop hop when late:
                        Func<Task> lateHop = async () => await Task.Run(async () => await context.Prioritize(hop.Level));
                        lateHop.Should().ThrowAsync<ObjectDisposedException>().WaitAsync(TestTimeout.Unexpected).GetAwaiter().GetResult();
                        break;
                    case Op.Hop hop:
                        helpers.Add(QueueAndWait(context, hop.Level, () => Task.Run(async () =>
                        {
                            await context.Prioritize(hop.Level);
                            runner.Log.Add($"{id}:hop@{PriorityContext.CurrentLevel}");
                        })));
                        model.PostTopLevel(id, LogOnly(hop.Level));
                        break;
                    case Op.Complete:
                        loop.Complete();
                        break;
                    case Op.Dispose when !late:
                        gate.Set();
                        loop.DisposeOrFail(); // Dispose, bounded: it waits for the loop to stop
                        late = true;
                        break;
                }
            }
        }
        finally
        {
            gate.Set();
        }

        loop.Complete();
        loop.Completion.WithTimeout("the loop to stop").GetAwaiter().GetResult();
        Task.WhenAll(helpers).WithTimeout("the cross-thread Sends and hops").GetAwaiter().GetResult();
        model.RunToEnd();

        // Sends and hops log "id:send@L" / "id:hop@L"; the model logs them as a script that only starts: map them alike.
        List<string> actual = runner.Log.Select(e => Regex.Replace(e, ":(send|hop)@", ":start@")).ToList();
        actual.Should().Equal(model.Log, $"the loop must run exactly what the model runs, in order. Plan: {plan}");
        Volatile.Read(ref dropEvents).Should().Be(expectedDrops, "every late post is reported");
        context.GetSnapshot().DroppedCount.Should().Be(expectedDrops, "every late post is counted");
    }

    private static Op.PostScript LogOnly(int level) => new(level, new Script(Array.Empty<Step>()), AsyncVoidThatThrows: false);

    /// <summary>Starts an operation that queues one item at <paramref name="level"/> from another thread and waits until it is queued.</summary>
    private static Task QueueAndWait(PriorityContext context, int level, Func<Task> start)
    {
        int before = context.GetSnapshot().PendingPerLevel[level];
        Task task = start();
        SpinWait.SpinUntil(() => context.GetSnapshot().PendingPerLevel[level] > before || task.IsCompleted, TestTimeout.Unexpected)
            .Should().BeTrue("the cross-thread operation must queue its item");
        return task;
    }

    // ---- Three producers, invariants ------------------------------------------------------------------------------------------

    private static void RunThreeProducers(ScriptGen.ThreadPlans plans)
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = ScriptGen.Levels, Name = "model-mt" });
        PriorityContext context = loop.Context;
        var runner = new RealRunner(context);
        var droppedIds = new ConcurrentQueue<string>();
        int dropEvents = 0;
        context.WorkDropped += (_, e) =>
        {
            Interlocked.Increment(ref dropEvents);
            if (e.State is RealRunner.Starter starter)
            {
                droppedIds.Enqueue(starter.Item.Id);
            }
        };

        var sendReturned = new ConcurrentDictionary<string, bool>(); // id -> returned (true) or rejected (false)
        var hopResumed = new ConcurrentDictionary<string, bool>();
        var failures = new ConcurrentQueue<Exception>();
        using var start = new ManualResetEventSlim(false);
        var threads = plans.Threads.Select((plan, t) => new Thread(() =>
        {
            try
            {
                start.Wait();
                for (int i = 0; i < plan.Ops.Count; i++)
                {
                    string id = $"t{t}.{i}";
                    switch (plan.Ops[i])
                    {
                        case Op.PostScript post:
                            context.GetSynchronizationContext(post.Level).Post(RealRunner.StartCallback, runner.CreateStarter(id, post));
                            break;
                        case Op.Send send:
                            try
                            {
                                context.GetSynchronizationContext(send.Level).Send(_ => runner.Log.Add($"{id}:send@{PriorityContext.CurrentLevel}"), null);
                                sendReturned[id] = true;
                            }
                            catch (ObjectDisposedException)
                            {
                                sendReturned[id] = false;
                            }

                            break;
                        case Op.Hop hop:
                            hopResumed[id] = Task.Run(async () =>
                            {
                                try
                                {
                                    await context.Prioritize(hop.Level);
                                    runner.Log.Add($"{id}:hop@{PriorityContext.CurrentLevel}");
                                    return true;
                                }
                                catch (ObjectDisposedException)
                                {
                                    return false;
                                }
                            }).WithTimeout($"hop {id}").GetAwaiter().GetResult();
                            break;
                        case Op.Complete:
                            loop.Complete();
                            break;
                        case Op.Dispose:
                            loop.Dispose();
                            break;
                    }
                }
            }
            catch (Exception ex)
            {
                failures.Enqueue(ex);
            }
        })
        { IsBackground = true, Name = $"producer {t}" }).ToList();

        threads.ForEach(th => th.Start());
        start.Set();
        threads.ForEach(th => th.JoinOrFail(th.Name!));
        loop.Complete();
        loop.Completion.WithTimeout("the loop to stop").GetAwaiter().GetResult();
        failures.Should().BeEmpty();

        string because = $"plans: {plans}";
        List<string> log = runner.Log;
        var byId = log.Select(Parse).ToList();
        var dropped = droppedIds.ToHashSet();

        for (int t = 0; t < plans.Threads.Count; t++)
        {
            var lastIndexPerLevel = new int[ScriptGen.Levels];
            Array.Fill(lastIndexPerLevel, -1);
            for (int i = 0; i < plans.Threads[t].Ops.Count; i++)
            {
                string id = $"t{t}.{i}";
                int starts = byId.Count(e => e.Id == id && e.Tag is "start" or "send" or "hop");
                switch (plans.Threads[t].Ops[i])
                {
                    case Op.PostScript:
                        (starts + (dropped.Contains(id) ? 1 : 0)).Should().Be(1, $"post {id} runs exactly once or is dropped exactly once; {because}");
                        break;
                    case Op.Send:
                        starts.Should().Be(sendReturned[id] ? 1 : 0, $"send {id}: returned => ran once, rejected => never ran; {because}");
                        break;
                    case Op.Hop:
                        starts.Should().Be(hopResumed[id] ? 1 : 0, $"hop {id}: resumed on the loop => logged once, rejected => never; {because}");
                        break;
                }
            }

            // FIFO per producer and level: the first entries (start / send / hop) of this producer's ops at each level come in op order.
            foreach (var entry in byId.Where(e => e.Thread == t && e.IsTopLevel && e.Tag is "start" or "send" or "hop"))
            {
                entry.OpIndex.Should().BeGreaterThan(lastIndexPerLevel[entry.Level], $"FIFO for producer {t} at level {entry.Level}; log: {string.Join(" ", log)}; {because}");
                lastIndexPerLevel[entry.Level] = entry.OpIndex;
            }
        }

        // Every script that started ran the trace the model gives it alone, in order, at the same levels.
        foreach (var group in byId.Where(e => e.IsTopLevel && e.Tag == "start").Select(e => e.Id))
        {
            (int t, int i) = ParseTopLevelId(group);
            var post = (Op.PostScript)plans.Threads[t].Ops[i];
            var model = new ReferenceModel(ScriptGen.Levels);
            model.PostTopLevel(group, post);
            model.RunToEnd();
            foreach (var key in model.Log.Select(e => Key(e)).Distinct())
            {
                log.Where(e => Key(e) == key).Should().Equal(model.Log.Where(e => Key(e) == key), $"the trace of {key} must not depend on other work; {because}");
            }
        }

        context.GetSnapshot().DroppedCount.Should().Be(Volatile.Read(ref dropEvents), "every drop is counted and reported");
    }

    // "t1.4/p2/c0:3@2" -> key "t1.4/p2" (calls are part of their caller's trace; posts are separate items, also when posted from
    // inside a call: "t0.9/c4/p1:0@0" -> key "t0.9/c4/p1")
    private static string Key(string entry) => s_callSegment.Replace(entry[..entry.IndexOf(':', StringComparison.Ordinal)], string.Empty);

    private static (int Thread, int Index) ParseTopLevelId(string id)
    {
        string[] parts = id[1..].Split('.');
        return (int.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture), int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture));
    }

    private static Entry Parse(string entry)
    {
        int colon = entry.IndexOf(':', StringComparison.Ordinal);
        int at = entry.LastIndexOf('@');
        string id = entry[..colon];
        bool topLevel = !id.Contains('/', StringComparison.Ordinal);
        (int t, int i) = topLevel ? ParseTopLevelId(id) : (-1, -1);
        return new Entry(id, entry[(colon + 1)..at], int.Parse(entry[(at + 1)..], System.Globalization.CultureInfo.InvariantCulture), topLevel, t, i);
    }

    private sealed record Entry(string Id, string Tag, int Level, bool IsTopLevel, int Thread, int OpIndex);
}

[Collection(StressCollection.Name)]
[Trait("Category", "Stress")]
public sealed class ModelBasedStressTests(ITestOutputHelper output)
{
    [Fact]
    public void ModelBased_FreshSeedsForAShareOfTheBudget_NoCounterexample() => ModelBasedTests.StressRounds(output);
}
