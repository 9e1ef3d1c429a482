namespace PriorityAsync.Tests.Reliability.Model;

/// <summary>
/// A simple, obviously-correct simulation of one loop: a FIFO list per level, strict priority, and the async-method semantics the
/// context promises (level carried by the captured context, inline <c>Prioritize</c> when nothing is queued above, <c>Yield</c> to
/// the back, a callee's level does not leak to its caller, <c>async void</c> exceptions posted to the level the method started on).
/// </summary>
/// <remarks>
/// The model also tracks the non-empty bitmask the way the real queues do (invariant I1 allows a stale set bit: the bit of a level
/// stays set after its last item was taken until the loop next finds the level empty). <c>Prioritize</c> is not fooled by a stale
/// bit: it checks the levels above for real (see <see cref="HasWorkAbove"/>).
/// </remarks>
internal sealed class ReferenceModel
{
    private readonly Queue<Action>[] _queues;
    private ulong _mask;

    public ReferenceModel(int levels)
    {
        _queues = Enumerable.Range(0, levels).Select(_ => new Queue<Action>()).ToArray();
    }

    public List<string> Log { get; } = new();

    /// <summary>Marks a level's bit as set without an item (the gate item the real loop ran first leaves its bit behind).</summary>
    public void SetStaleBit(int level) => _mask |= 1UL << level;

    /// <summary>Queues a top-level op the driver posted, as the real runner does.</summary>
    public void PostTopLevel(string id, Op.PostScript op) => Enqueue(op.Level, () => StartTopLevel(id, op));

    /// <summary>Runs until every queue is empty: strict priority, FIFO per level.</summary>
    public void RunToEnd()
    {
        while (_mask != 0)
        {
            int level = 63 - System.Numerics.BitOperations.LeadingZeroCount(_mask);
            if (_queues[level].Count == 0)
            {
                _mask &= ~(1UL << level); // the real loop clears a bit only when it finds the level empty
                continue;
            }

            _queues[level].Dequeue()(); // the bit stays set, even if the level is now empty
        }
    }

    private void Enqueue(int level, Action item)
    {
        _queues[level].Enqueue(item);
        _mask |= 1UL << level;
    }

    /// <summary>As the real loop: true emptiness of the levels above, clearing the stale bits it finds (they do not change the order).</summary>
    private bool HasWorkAbove(int level)
    {
        for (int above = _queues.Length - 1; above > level; above--)
        {
            if (_queues[above].Count > 0)
            {
                return true;
            }

            _mask &= ~(1UL << above);
        }

        return false;
    }

    private void StartTopLevel(string id, Op.PostScript op)
    {
        Log.Add($"{id}:start@{op.Level}");
        if (op.AsyncVoidThatThrows)
        {
            // The real async void wrapper awaits the script (a Call), then throws; the builder posts the exception to the context
            // captured when the method started (level op.Level), where the handler logs it.
            var wrapper = new Frame(id, new Script(new Step[] { new Step.Call(op.Script) }), op.Level, parent: null) { ThrowsAtEnd = true, StartLevel = op.Level };
            Resume(wrapper);
        }
        else
        {
            Resume(new Frame(id, op.Script, op.Level, parent: null));
        }
    }

    private void Resume(Frame f)
    {
        while (f.Pc < f.Script.Steps.Count)
        {
            int index = f.Pc++;
            switch (f.Script.Steps[index])
            {
                case Step.Record:
                    Log.Add($"{f.Id}:{index}@{f.Level}");
                    break;
                case Step.Yield:
                    f.WentAsync = true;
                    Enqueue(f.Level, () => Resume(f));
                    return;
                case Step.Prioritize p:
                    bool inline = !HasWorkAbove(p.Level);
                    f.Level = p.Level;
                    if (!inline)
                    {
                        f.WentAsync = true;
                        Enqueue(p.Level, () => Resume(f));
                        return;
                    }

                    break;
                case Step.Post post:
                    string childId = $"{f.Id}/p{index}";
                    Enqueue(post.Level, () =>
                    {
                        Log.Add($"{childId}:start@{post.Level}");
                        Resume(new Frame(childId, post.Child, post.Level, parent: null));
                    });
                    break;
                case Step.SendInline send:
                    Log.Add($"{f.Id}:{index}@{send.Level}");
                    break;
                case Step.Call call:
                    var callee = new Frame($"{f.Id}/c{index}", call.Callee, f.Level, parent: f);
                    Resume(callee);
                    if (!callee.Completed)
                    {
                        f.WentAsync = true; // our Task is incomplete too: our own caller must wait for us
                        return; // suspended; the callee resumes us when it completes
                    }

                    break;
            }
        }

        Complete(f);
    }

    private void Complete(Frame f)
    {
        f.Completed = true;
        if (f.ThrowsAtEnd)
        {
            int level = f.StartLevel;
            string id = f.Id;
            Enqueue(level, () => Log.Add($"{id}:ex@{level}"));
        }

        if (f.Parent is { } parent && f.WentAsync)
        {
            // The caller awaited our Task, capturing its own level's context. Completing while that context is current resumes it
            // inline (SynchronizationContextAwaitTaskContinuation); otherwise it is posted to the back of the caller's level.
            if (f.Level == parent.Level)
            {
                Resume(parent);
            }
            else
            {
                parent.WentAsync = true;
                Enqueue(parent.Level, () => Resume(parent));
            }
        }
    }

    private sealed class Frame(string id, Script script, int level, Frame? parent)
    {
        public string Id { get; } = id;

        public Script Script { get; } = script;

        public Frame? Parent { get; } = parent;

        public int Level { get; set; } = level;

        public int Pc { get; set; }

        public bool WentAsync { get; set; }

        public bool Completed { get; set; }

        public bool ThrowsAtEnd { get; init; }

        public int StartLevel { get; init; }
    }
}
