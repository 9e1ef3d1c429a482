using FsCheck;
using FsCheck.Fluent;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Controllers;

/// <summary>
/// Model-based test (FsCheck) of <see cref="PriorityTaskController"/> under strict priority: random plans of plain posts, posts under
/// two controllers (some items move their own controller when they run), SetLevel, Cancel and steps of the driver (<c>await
/// Yield(level)</c>, which lets the loop run everything ahead of it) run on a real loop and on <see cref="Model"/>; the run order (with
/// the level each item ran at) and the dropped items must be equal, exactly.
/// </summary>
/// <remarks>
/// The model states the controller's rule, not its mechanism: a controller with queued items holds one place in the FIFO of its level;
/// when that place comes up its oldest item runs and, if items remain, it takes a new place at the back of its level; SetLevel to a new
/// level gives up the old place and takes one at the back of the new level; Cancel gives up the place and drops the items, in order,
/// and every later post under it. The real controller's stale activations have no counterpart here: they must be invisible.
/// </remarks>
public sealed class ControllerModelTests
{
    private const int Levels = 3;
    private const int Controllers = 2;

    [Fact]
    public void RandomPlans_RunOrderAndDropsEqualTheModel() =>
        Check.One(Config.QuickThrowOnFailure.WithMaxTest(300), Prop.ForAll(Plans, RunPlan));

    internal abstract record Op
    {
        public sealed record PostPlain(int Level) : Op;

        /// <summary>Post under controller <paramref name="Controller"/>; when the item runs it moves its controller to <paramref name="MoveTo"/>, if set.</summary>
        public sealed record PostUnder(int Controller, int? MoveTo) : Op;

        public sealed record SetLevel(int Controller, int Level) : Op;

        public sealed record Cancel(int Controller) : Op;

        /// <summary>The driver awaits <c>Yield(Level)</c>: everything queued ahead of it runs.</summary>
        public sealed record Step(int Level) : Op;
    }

    internal sealed record Plan(IReadOnlyList<int> InitialLevels, IReadOnlyList<Op> Ops)
    {
        public override string ToString() => $"levels [{string.Join(",", InitialLevels)}]: {string.Join("; ", Ops)}";
    }

    private static Gen<int> Level => Gen.Choose(0, Levels - 1);

    private static Gen<int> Controller => Gen.Choose(0, Controllers - 1);

    private static Gen<Op> OpGen =>
        Gen.Frequency(
            (3, Level.Select(l => (Op)new Op.PostPlain(l))),
            (6, from c in Controller from move in Gen.Frequency((3, Gen.Constant<int?>(null)), (1, Level.Select(l => (int?)l))) select (Op)new Op.PostUnder(c, move)),
            (3, from c in Controller from l in Level select (Op)new Op.SetLevel(c, l)),
            (1, Controller.Select(c => (Op)new Op.Cancel(c))),
            (3, Level.Select(l => (Op)new Op.Step(l))));

    private static Arbitrary<Plan> Plans =>
        Arb.From(
            from levels in Gen.ListOf(Level, Controllers)
            from ops in Gen.Sized(size => Gen.ListOf(OpGen, Math.Min(size, 60)))
            select new Plan(levels.ToArray(), ops.ToArray()),
            plan => Enumerable.Range(0, plan.Ops.Count).Select(skip => plan with { Ops = plan.Ops.Where((_, i) => i != skip).ToArray() }));

    private static void RunPlan(Plan plan)
    {
        var log = new List<string>();
        var dropped = new List<string>();
        long droppedCount = -1;
        TestTimeout.OnOwnThread(() => PriorityContext.Run(async () =>
        {
            PriorityContext context = PriorityContext.Current!;
            context.WorkDropped += (_, e) =>
            {
                e.Reason.Should().Be(DropReason.Cancelled);
                dropped.Add((string)e.State!);
            };
            PriorityTaskController[] controllers = plan.InitialLevels.Select(context.CreateController).ToArray();
            int n = 0;
            foreach (Op op in plan.Ops)
            {
                switch (op)
                {
                    case Op.PostPlain post:
                        context.GetSynchronizationContext(post.Level).Post(static s => ((Action)s!)(), Logger($"p{n++}", log, null));
                        break;
                    case Op.PostUnder post:
                        PriorityTaskController own = controllers[post.Controller];
                        string name = $"c{post.Controller}.{n++}";
                        Action body = Logger(name, log, post.MoveTo is int to ? () => own.SetLevel(to) : null);
                        own.Post(_ => body(), name);
                        break;
                    case Op.SetLevel set:
                        controllers[set.Controller].SetLevel(set.Level);
                        break;
                    case Op.Cancel cancel:
                        controllers[cancel.Controller].Cancel();
                        break;
                    case Op.Step step:
                        await context.Yield(step.Level);
                        log.Add($"driver@{PriorityContext.CurrentLevel}");
                        break;
                }
            }

            context.GetSynchronizationContext(0).Post(_ => droppedCount = context.GetSnapshot().DroppedCount, null);
        }, new PriorityContextOptions { Levels = Levels, Name = "controller-model" }), "PriorityContext.Run");

        var model = new Model(plan.InitialLevels);
        model.Run(plan.Ops);
        log.Should().Equal(model.Log, $"the loop must run what the model runs, in order. Plan: {plan}");
        dropped.Should().Equal(model.Dropped, $"every cancelled item is reported once, in order. Plan: {plan}");
        droppedCount.Should().Be(model.Dropped.Count, "and counted");
    }

    private static Action Logger(string name, List<string> log, Action? then) => () =>
    {
        log.Add($"{name}@{PriorityContext.CurrentLevel}");
        then?.Invoke();
    };

    /// <summary>The reference model: strict priority over per-level FIFOs of entries, and the controller's rule (see the remarks).</summary>
    private sealed class Model
    {
        private readonly Queue<Entry>[] _levels = Enumerable.Range(0, Levels).Select(_ => new Queue<Entry>()).ToArray();
        private readonly Ctl[] _controllers;

        public Model(IReadOnlyList<int> initialLevels) =>
            _controllers = initialLevels.Select(l => new Ctl { Level = l }).ToArray();

        public List<string> Log { get; } = [];

        public List<string> Dropped { get; } = [];

        public void Run(IReadOnlyList<Op> ops)
        {
            int n = 0;
            foreach (Op op in ops)
            {
                switch (op)
                {
                    case Op.PostPlain post:
                        _levels[post.Level].Enqueue(new Entry($"p{n++}", -1, 0));
                        break;
                    case Op.PostUnder post:
                        PostUnder(post.Controller, $"c{post.Controller}.{n++}", post.MoveTo);
                        break;
                    case Op.SetLevel set:
                        SetLevel(set.Controller, set.Level);
                        break;
                    case Op.Cancel cancel:
                        Cancel(cancel.Controller);
                        break;
                    case Op.Step step:
                        _levels[step.Level].Enqueue(new Entry("driver", -1, 0));
                        RunUntilDriver(step.Level);
                        break;
                }
            }

            RunUntilDriver(-1); // the driver returned: the loop drains everything
        }

        private void PostUnder(int c, string name, int? moveTo)
        {
            Ctl ctl = _controllers[c];
            if (ctl.Cancelled)
            {
                Dropped.Add(name);
                return;
            }

            ctl.Items.Enqueue((name, moveTo));
            if (!ctl.HasPlace)
            {
                ctl.HasPlace = true;
                _levels[ctl.Level].Enqueue(new Entry(null, c, ctl.Generation));
            }
        }

        private void SetLevel(int c, int level)
        {
            Ctl ctl = _controllers[c];
            if (ctl.Level == level)
            {
                return;
            }

            ctl.Level = level;
            if (ctl.HasPlace)
            {
                ctl.Generation++; // the old place is given up
                _levels[level].Enqueue(new Entry(null, c, ctl.Generation));
            }
        }

        private void Cancel(int c)
        {
            Ctl ctl = _controllers[c];
            if (ctl.Cancelled)
            {
                return;
            }

            ctl.Cancelled = true;
            ctl.HasPlace = false;
            ctl.Generation++;
            Dropped.AddRange(ctl.Items.Select(i => i.Name));
            ctl.Items.Clear();
        }

        private void RunUntilDriver(int driverLevel)
        {
            while (true)
            {
                int level = Array.FindLastIndex(_levels, q => q.Count > 0);
                if (level < 0)
                {
                    return;
                }

                Entry entry = _levels[level].Dequeue();
                if (entry.Name == "driver")
                {
                    Log.Add($"driver@{driverLevel}");
                    return;
                }

                if (entry.Controller < 0)
                {
                    Log.Add($"{entry.Name}@{level}");
                    continue;
                }

                Ctl ctl = _controllers[entry.Controller];
                if (entry.Generation != ctl.Generation || ctl.Cancelled)
                {
                    continue; // a place given up: nothing runs
                }

                (string name, int? moveTo) = ctl.Items.Dequeue();
                if (ctl.Items.Count > 0)
                {
                    _levels[ctl.Level].Enqueue(entry); // a new place at the back of its level
                }
                else
                {
                    ctl.HasPlace = false;
                }

                Log.Add($"{name}@{level}");
                if (moveTo is int to)
                {
                    SetLevel(entry.Controller, to);
                }
            }
        }

        private sealed record Entry(string? Name, int Controller, int Generation);

        private sealed class Ctl
        {
            public Queue<(string Name, int? MoveTo)> Items { get; } = new();

            public int Level { get; set; }

            public int Generation { get; set; }

            public bool HasPlace { get; set; }

            public bool Cancelled { get; set; }
        }
    }
}
