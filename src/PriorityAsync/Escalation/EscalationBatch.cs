using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;

namespace PriorityAsync.Internal;

/// <summary>What a change of the escalation graph must do once its lock is released ([X-GRAPH]): queue the moved work at its new level
/// (a post may drop it and raise <c>WorkDropped</c>, user code) and report the change (listeners are user code).</summary>
internal struct EscalationBatch
{
    private List<(FlowContext Context, int Level, int Count)>? _moves;
    private List<Action>? _after;

    /// <summary>Queues <paramref name="count"/> places for <paramref name="context"/>'s waiting work at <paramref name="level"/> ([X-MOVE]).</summary>
    public void Move(FlowContext context, int level, int count) => (_moves ??= []).Add((context, level, count));

    /// <summary>Runs <paramref name="action"/> after the moves, outside the lock.</summary>
    public void After(Action action) => (_after ??= []).Add(action);

    /// <summary>Carries out the batch; every part runs, and the first exception (a <c>WorkDropped</c> handler's, of a scheduler that
    /// finished meanwhile) is rethrown after.</summary>
    public readonly void Run()
    {
        if (_moves is not null || _after is not null)
        {
            RunCore(); // an empty batch (an uncontended lock's take and release) costs a test
        }
    }

    private readonly void RunCore()
    {
        ExceptionDispatchInfo? first = null;
        if (_moves is { } moves)
        {
            foreach ((FlowContext context, int level, int count) in moves)
            {
                for (int i = 0; i < count; i++)
                {
                    try
                    {
                        context.QueuePlace(level);
                    }
                    catch (Exception ex)
                    {
                        first ??= ExceptionDispatchInfo.Capture(ex);
                    }
                }
            }
        }

        if (_after is { } after)
        {
            foreach (Action action in after)
            {
                try
                {
                    action();
                }
                catch (Exception ex)
                {
                    first ??= ExceptionDispatchInfo.Capture(ex);
                }
            }
        }

        first?.Throw();
    }
}
