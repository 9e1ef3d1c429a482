using System;
using System.Threading;
using System.Threading.Tasks;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>Where a <see cref="LoopBatch"/> runs its batch on the loop.</summary>
internal enum LoopCode
{
    /// <summary>Plain level code: a callback posted to level 0's own context (what a <c>Run</c> entry runs in).</summary>
    Plain,

    /// <summary>Inside <c>InvokeAsync</c> work at level 0, a flow of its own ([X-FLOW] in docs/design.md), which plain level code at
    /// level 0 awaits (<c>await InvokeAsync(...)</c>, as the work's caller usually does): the await is a wait on the flow, at its own
    /// level, so it raises nothing.</summary>
    InvokeAsync,

    /// <summary>Inside <c>InvokeAsync</c> work at level 0 that nobody awaits (<c>_ = InvokeAsync(...)</c>).</summary>
    InvokeAsyncNotAwaited,

    /// <summary>Inside a child of the scheduler's root scope at level 0: a flow of its own too.</summary>
    ScopeChild,
}

/// <summary>
/// Runs a benchmark's batch (an async method) on a long-lived <see cref="PriorityContextThread"/> of 3 levels, in plain level code or
/// inside one long-lived flow, and waits for it: one cross-thread hand-off per invocation (a post, and a
/// <see cref="ManualResetEventSlim"/> set at the end), which the batch's operations share.
/// </summary>
/// <remarks>
/// Nothing is allocated per invocation beyond what the batch allocates: the flow's method is started once and waits between batches on
/// a <see cref="LoopChannel{T}"/>, woken by a plain callback (the channel resumes it through its flow's context), so its state machine is
/// allocated once; in plain level code a batch that completes synchronously allocates nothing, and one that suspends allocates its
/// state machine (and the caller's) once per invocation, shared by thousands of operations.
/// </remarks>
internal sealed class LoopBatch : IDisposable
{
    private static readonly SendOrPostCallback s_runPlain = static state => _ = ((LoopBatch)state!).RunPlainAsync();
    private static readonly SendOrPostCallback s_go = static state => ((LoopBatch)state!)._go.Write(true);
    private static readonly SendOrPostCallback s_stop = static state => ((LoopBatch)state!)._go.Write(false);

    private readonly PriorityContextThread _thread;
    private readonly SynchronizationContext _level0;
    private readonly Func<Task> _batch;
    private readonly LoopCode _where;
    private readonly ManualResetEventSlim _done = new(false);
    private readonly LoopChannel<bool> _go = new();
    private readonly Task? _flow;
    private Exception? _failure;

    /// <param name="name">The loop's name.</param>
    /// <param name="where">Where the batch runs.</param>
    /// <param name="batch">The batch: a cached delegate, called once per invocation on the loop.</param>
    public LoopBatch(string name, LoopCode where, Func<Task> batch)
    {
        _thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = name });
        _level0 = _thread.Context.GetSynchronizationContext(0);
        _batch = batch;
        _where = where;
        _flow = where switch
        {
            LoopCode.InvokeAsync => StartOnLoop(AwaitFlowAsync),
            LoopCode.InvokeAsyncNotAwaited => _thread.Context.InvokeAsync(FlowAsync, 0).Task,
            LoopCode.ScopeChild => StartOnLoop(() => _thread.Context.Scope.StartAsync(_ => FlowAsync(), 0).Task), // on the scope's threads
            _ => null,
        };
    }

    /// <summary>Runs the batch once on the loop and waits for it to end.</summary>
    public void Run()
    {
        _done.Reset();
        _level0.Post(_where == LoopCode.Plain ? s_runPlain : s_go, this);
        if (!_done.Wait(TimeSpan.FromSeconds(60)))
        {
            throw new TimeoutException($"The loop did not run the batch ({_where}) within 60 s; it has stopped.");
        }

        if (_failure is { } failure)
        {
            throw new InvalidOperationException($"The batch ({_where}) failed on the loop.", failure);
        }
    }

    public void Dispose()
    {
        if (_flow is not null)
        {
            _level0.Post(s_stop, this);
            if (!_flow.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException($"The batch's flow ({_where}) did not end within 60 s.");
            }
        }

        _thread.Dispose();
    }

    /// <summary>Calls <paramref name="start"/> in plain level code at level 0 and returns what it returned.</summary>
    private Task StartOnLoop(Func<Task> start)
    {
        Task? started = null;
        _level0.Send(_ => started = start(), null);
        return started!;
    }

    private async Task AwaitFlowAsync() => await _thread.Context.InvokeAsync(FlowAsync, 0); // the PriorityTask: a wait on the flow

    private async Task RunPlainAsync()
    {
        try
        {
            await _batch();
        }
        catch (Exception e)
        {
            _failure = e;
        }

        _done.Set();
    }

    /// <summary>The long-lived flow: one batch per go, until told to stop.</summary>
    private async Task FlowAsync()
    {
        while (await _go.ReadAsync())
        {
            try
            {
                await _batch();
            }
            catch (Exception e)
            {
                _failure = e;
            }

            _done.Set();
        }
    }
}
