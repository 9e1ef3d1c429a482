using FsCheck;
using FsCheck.Fluent;

namespace PriorityAsync.Tests.Reliability.Model;

/// <summary>One step of a script that an async method interprets on the loop (see <see cref="RealRunner"/>) and the
/// reference model simulates (see <see cref="ReferenceModel"/>).</summary>
internal abstract record Step
{
    /// <summary>Log "id:index@level" (the level the code runs at).</summary>
    public sealed record Record : Step
    {
        public override string ToString() => "rec";
    }

    /// <summary><c>await Priority.Yield()</c>: to the back of the current level.</summary>
    public sealed record Yield : Step
    {
        public override string ToString() => "yield";
    }

    /// <summary><c>await Priority.Prioritize(Level)</c>.</summary>
    public sealed record Prioritize(int Level) : Step
    {
        public override string ToString() => $"prio({Level})";
    }

    /// <summary>Post a new script (a separate item) at <paramref name="Level"/> from the loop.</summary>
    public sealed record Post(int Level, Script Child) : Step
    {
        public override string ToString() => $"post({Level},{Child})";
    }

    /// <summary>Send from the loop thread at <paramref name="Level"/>: runs inline and logs at that level.</summary>
    public sealed record SendInline(int Level) : Step
    {
        public override string ToString() => $"send({Level})";
    }

    /// <summary><c>await</c> a nested async method interpreting <paramref name="Callee"/>.</summary>
    public sealed record Call(Script Callee) : Step
    {
        public override string ToString() => $"call{Callee}";
    }
}

/// <summary>A sequence of steps.</summary>
internal sealed record Script(IReadOnlyList<Step> Steps)
{
    public override string ToString() => "[" + string.Join(" ", Steps) + "]";
}

/// <summary>An operation of the test driver (a thread outside the loop).</summary>
internal abstract record Op
{
    /// <summary>Post a script at a level; as <c>async void</c> it throws at its end (handled through UnhandledException).</summary>
    public sealed record PostScript(int Level, Script Script, bool AsyncVoidThatThrows) : Op
    {
        public override string ToString() => $"Post(L{Level}, {(AsyncVoidThatThrows ? "async void throws " : string.Empty)}{Script})";
    }

    /// <summary>Cross-thread Send at a level (logs "send" at that level).</summary>
    public sealed record Send(int Level) : Op
    {
        public override string ToString() => $"Send(L{Level})";
    }

    /// <summary><c>await context.Prioritize(level)</c> from a thread-pool thread, then log on the loop.</summary>
    public sealed record Hop(int Level) : Op
    {
        public override string ToString() => $"Hop(L{Level})";
    }

    /// <summary><see cref="PriorityContextThread.Complete"/>.</summary>
    public sealed record Complete : Op
    {
        public override string ToString() => "Complete";
    }

    /// <summary><see cref="PriorityContextThread.Dispose()"/>: completes and waits for the loop to stop; later ops are late.</summary>
    public sealed record Dispose : Op
    {
        public override string ToString() => "Dispose";
    }
}

internal static class ScriptGen
{
    public const int Levels = 3;

    public static Gen<int> Level => Gen.Choose(0, Levels - 1);

    public static Gen<Script> Script(int depth) =>
        from n in Gen.Choose(0, 5)
        from steps in Gen.ListOf(StepGen(depth), n)
        select new Script(steps.ToArray());

    public static Gen<Step> StepGen(int depth)
    {
        var choices = new List<(int, Gen<Step>)>
        {
            (4, Gen.Constant<Step>(new Step.Record())),
            (2, Gen.Constant<Step>(new Step.Yield())),
            (3, Level.Select(l => (Step)new Step.Prioritize(l))),
            (1, Level.Select(l => (Step)new Step.SendInline(l))),
        };
        if (depth > 0)
        {
            choices.Add((1, from l in Level from c in Script(depth - 1) select (Step)new Step.Post(l, c)));
            choices.Add((2, Script(depth - 1).Select(c => (Step)new Step.Call(c))));
        }

        return Gen.Frequency(choices.ToArray());
    }

    public static Gen<Op> OpGen(bool allowSendAndHop) =>
        Gen.Frequency(
            (10, from l in Level from s in Script(2) from v in Gen.Frequency((4, Gen.Constant(false)), (1, Gen.Constant(true))) select (Op)new Op.PostScript(l, s, v)),
            (allowSendAndHop ? 2 : 0, Level.Select(l => (Op)new Op.Send(l))),
            (allowSendAndHop ? 2 : 0, Level.Select(l => (Op)new Op.Hop(l))),
            (1, Gen.Constant<Op>(new Op.Complete())),
            (1, Gen.Constant<Op>(new Op.Dispose())));

    /// <summary>Ops of one driver thread, printed readably in a counterexample.</summary>
    public sealed record OpList(IReadOnlyList<Op> Ops)
    {
        public override string ToString() => string.Join("; ", Ops);
    }

    public static Arbitrary<OpList> SingleProducer =>
        Arb.From(
            Gen.Sized(size => Gen.ListOf(OpGen(allowSendAndHop: true), Math.Min(size, 40))).Select(l => new OpList(l.ToArray())),
            ShrinkOps);

    /// <summary>Shrinks a counterexample by dropping one op at a time, so a failure prints a short plan.</summary>
    private static IEnumerable<OpList> ShrinkOps(OpList list) =>
        Enumerable.Range(0, list.Ops.Count).Select(skip => new OpList(list.Ops.Where((_, i) => i != skip).ToArray()));

    public sealed record ThreadPlans(IReadOnlyList<OpList> Threads)
    {
        public override string ToString() => string.Join(" || ", Threads.Select((t, i) => $"thread {i}: {t}"));
    }

    public static Arbitrary<ThreadPlans> ThreePlans =>
        Arb.From(
            from a in Gen.ListOf(OpGen(allowSendAndHop: true), 25)
            from b in Gen.ListOf(OpGen(allowSendAndHop: true), 25)
            from c in Gen.ListOf(OpGen(allowSendAndHop: true), 25)
            select new ThreadPlans(new[] { new OpList(a.ToArray()), new OpList(b.ToArray()), new OpList(c.ToArray()) }));
}
