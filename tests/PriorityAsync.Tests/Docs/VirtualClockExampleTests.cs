namespace PriorityAsync.Tests.Docs;

/// <summary>The virtual-clock example of docs/testing.md, compiled and run here; tools/Snippets copies the regions there, and
/// tests/Docs.Tests checks the copies.</summary>
public class VirtualClockExampleTests
{
    // begin-snippet: testing-virtual-clock
    // Needs: an xunit test class; using PriorityAsync; FluentAssertions; RenewingWorker and ScriptedBus below.
    [Fact]
    public void RenewingWorker_CpuStepsOf15Seconds_RenewsAtTheCheckpointsAndRetriesARefusal()
    {
        var clock = new VirtualTimeProvider();
        var bus = new ScriptedBus(clock, refusals: 2);
        var worker = new RenewingWorker(bus);

        // The loop runs on this thread and moves the clock itself, to the next timer, whenever nothing is runnable. Each step
        // stands for 15 s of CPU-bound work: it advances the clock, and nothing else runs on the loop meanwhile.
        PriorityContext.Run(
            () => worker.ProcessAsync("m1", steps: 6, step: _ => clock.Advance(TimeSpan.FromSeconds(15))),
            new PriorityContextOptions { Levels = 3, TimeProvider = clock });

        bus.Calls.Should().Equal(
            "renew refused at 00:00:30",   // due at 0:20, during step 2 (0:15-0:30): it runs at the checkpoint after it
            "renew refused at 00:00:45",   // the retry, due at 0:31, waits for step 3
            "renew accepted at 00:01:00",  // the second retry, due at 0:47, waits for step 4
            "renew accepted at 00:01:30",  // due at 1:20, during step 6
            "complete at 00:01:30");
    }
    // end-snippet
}

// begin-snippet: testing-virtual-clock-worker
// Needs: using PriorityAsync (a class library or a test project: the worker, and the ILeaseBus it talks to).
/// <summary>The code under test: processes a message in steps at level 1 while it renews the message's lease every 20 s at
/// level 2; a refused renewal is tried again after 1 s, then 2 s, 4 s, ...</summary>
public sealed class RenewingWorker(ILeaseBus bus)
{
    public static readonly TimeSpan RenewEvery = TimeSpan.FromSeconds(20);

    public async Task ProcessAsync(string message, int steps, Action<int> step)
    {
        await TaskScope.RunAsync(async scope =>
        {
            scope.Start(stop => KeepLeaseAsync(message, stop), level: 2);
            await Priority.Prioritize(1);
            for (int i = 0; i < steps; i++)
            {
                step(i);                      // CPU-bound: nothing else runs on the loop meanwhile
                await Priority.Yield();       // a checkpoint: a renewal that fell due runs now
            }

            scope.Cancel();                   // processed: stop renewing
        });
        await bus.CompleteAsync(message);
    }

    private async Task KeepLeaseAsync(string message, CancellationToken stop)
    {
        while (true)
        {
            await Priority.Delay(RenewEvery, stop);
            TimeSpan backoff = TimeSpan.FromSeconds(1);
            while (!await bus.TryRenewAsync(message))
            {
                await Priority.Delay(backoff, stop);
                backoff *= 2;
            }
        }
    }
}

public interface ILeaseBus
{
    Task<bool> TryRenewAsync(string message);

    Task CompleteAsync(string message);
}
// end-snippet

// begin-snippet: testing-virtual-clock-bus
// Needs: using PriorityAsync; the ILeaseBus interface above.
/// <summary>A test's bus: refuses the first renewals, and records each call with the virtual time it was made at.</summary>
public sealed class ScriptedBus(VirtualTimeProvider clock, int refusals) : ILeaseBus
{
    private int _refusals = refusals;

    public List<string> Calls { get; } = [];

    public Task<bool> TryRenewAsync(string message)
    {
        bool accepted = _refusals-- <= 0;
        Calls.Add($"renew {(accepted ? "accepted" : "refused")} at {clock.Elapsed:hh\\:mm\\:ss}");
        return Task.FromResult(accepted);
    }

    public Task CompleteAsync(string message)
    {
        Calls.Add($"complete at {clock.Elapsed:hh\\:mm\\:ss}");
        return Task.CompletedTask;
    }
}
// end-snippet
