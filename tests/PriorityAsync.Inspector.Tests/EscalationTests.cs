using System.Globalization;
using System.Text.Json;

namespace PriorityAsync.Inspector.Tests;

/// <summary>
/// Priority inversion as the inspector shows it, on the real target (docs/concepts.md's lock scenario on its worker): the escalations
/// in force and those that ended (the raised work, from which level to which, the cause and who waits), and the long lock waits as
/// warnings, in <c>--once</c>, <c>--once --json</c>, a recording's replay and its Chrome trace. Every wait is gated on what the
/// target reports: it says "done" once its keeper found the lock held (so the holder was raised) or once a listener in it saw the
/// library report the long wait, which reaches the inspector's session first; the tool is then stopped with a line q, and stopping
/// drains the session.
/// No claim depends on time but the stall timeout's own (500 ms in the target), the least a reported wait can have lasted.
/// </summary>
public sealed class EscalationTests
{
    private const double StallTimeoutMs = 500;

    [Fact]
    public async Task OnceJson_KeeperWaitsOnALockHeldAtLevel0DuringAFlood_ShowsTheEndedEscalationsFrom0To2ByTheLock()
    {
        (Snapshot snapshot, _) = await OnceAsync("inversion 3", json: true);

        EscalationsSnapshot escalations = snapshot.Schedulers.Single(s => s.Name == "worker").Escalations;
        escalations.EndedInWindow.Should().BeGreaterThanOrEqualTo(3, "each of the keeper's 3 waits on the held lock raised the holder's region");
        escalations.InForce.Should().BeEmpty("every wait has ended, so every escalation has");
        EscalationSnapshot longest = escalations.LongestEnded!;
        longest.Work.Should().Be("PriorityLock 'lease' region");
        (longest.FromLevel, longest.ToLevel, longest.Cause).Should().Be((0, 2, "lock"));
        longest.By.Should().Be("InvokeAsync Worker.LeaseKeeperAsync at level 2, waiting for the PriorityLock 'lease'");
        longest.RaisedForMs.Should().BeGreaterThanOrEqualTo(0);
        escalations.LongLockWaits.Should().BeEmpty("the raised holder released the lock each time");
        snapshot.Schedulers.Single(s => s.Name == "pool").Escalations.EndedInWindow.Should().Be(0);
    }

    [Fact]
    public async Task OnceJson_HolderRaisedButStillHolding_ShowsTheEscalationInForceAndTheLongWaitAsRaised()
    {
        (Snapshot snapshot, _) = await OnceAsync("lock-held", json: true);

        EscalationsSnapshot escalations = snapshot.Schedulers.Single(s => s.Name == "worker").Escalations;
        EscalationSnapshot raised = escalations.InForce.Should().ContainSingle().Which;
        raised.Work.Should().Be("PriorityLock 'ledger' region");
        (raised.FromLevel, raised.ToLevel, raised.Cause).Should().Be((0, 2, "lock"));
        raised.By.Should().Be("InvokeAsync Worker.LedgerKeeperAsync at level 2, waiting for the PriorityLock 'ledger'");
        raised.RaisedForMs.Should().BeGreaterThan(0);
        raised.SinceSeconds.Should().BeLessThanOrEqualTo(snapshot.AttachedForSeconds);

        LockWaitSnapshot wait = escalations.LongLockWaits.Should().ContainSingle().Which;
        (wait.Lock, wait.Level, wait.HolderRaised).Should().Be(("the PriorityLock 'ledger'", 2, true));
        wait.Holders.Should().Be("code at level 0 of the PriorityContext 'worker'");
        wait.WaitedMs.Should().BeGreaterThanOrEqualTo(StallTimeoutMs - 20, "it is reported at the stall timeout (less the timer's tick)");

        Warning warning = snapshot.Warnings.Should().ContainSingle(w => w.Kind == "long-lock-wait").Which;
        (warning.Scheduler, warning.Level, warning.Method).Should().Be(("worker", 2, (string?)null));
        warning.Message.Should().StartWith("worker: code at level 2 has waited ")
            .And.EndWith(" for the PriorityLock 'ledger', held by code at level 0 of the PriorityContext 'worker'; the holder was raised to its level and still holds it.");
        warning.Advice.Should().Contain("blocked (a synchronous wait) or its critical section is long");
    }

    [Fact]
    public async Task Once_HolderRaisedButStillHolding_TextShowsTheRaisedWorkAndTheLongWait()
    {
        (_, string output) = await OnceAsync("lock-held", json: false);

        output.Should().Contain("escalations: 1 in force, none ended in the window");
        output.Should().Contain("raised PriorityLock 'ledger' region from level 0 to 2 (lock: InvokeAsync Worker.LedgerKeeperAsync at level 2, waiting for the PriorityLock 'ledger') for ");
        output.Should().Contain("long lock wait +").And.Contain(": the PriorityLock 'ledger', waiter at level 2, waited ").And.Contain("(holder raised, still holding)");
        output.Should().Contain("long-lock-wait: worker: code at level 2 has waited ").And.NotContain("No warnings.");
    }

    [Fact]
    public async Task Once_HolderOffTheScheduler_TextWarnsThatTheHolderCouldNotBeRaised()
    {
        (_, string output) = await OnceAsync("lock-off", json: false);

        output.Should().Contain("long-lock-wait: worker: code at level 2 has waited ")
            .And.Contain(" for the PriorityLock 'journal', held by code off every priority scheduler; the holder could not be raised (it runs off this scheduler).")
            .And.Contain("take the lock on the same scheduler as its waiters");
        output.Should().Contain(": the PriorityLock 'journal', waiter at level 2, waited ").And.Contain("(holder could not be raised)");
        output.Should().NotContain("escalations:", "nothing could be raised");
    }

    [Fact]
    public async Task Record_InversionAndAHeldLock_ReplayShowsThemAndTheChromeTraceHasTheEscalationTrack()
    {
        string directory = Directory.CreateTempSubdirectory("prio-escalation-").FullName;
        try
        {
            string recording = Path.Combine(directory, "worker.nettrace");
            await using (TestTarget target = await TestTarget.StartAsync())
            {
                using Prio.Running prio = Prio.Start(target.Id.ToString(CultureInfo.InvariantCulture), "--record", recording, "--no-view");
                await target.WaitForLineAsync("inspector on");
                await target.SendAsync("inversion 2");
                await target.SendAsync("lock-held");
                (int exitCode, _, string error) = await prio.QuitAsync();
                exitCode.Should().Be(ExitCodes.Success, error);
            }

            (int replayCode, string json, string replayError) = await Prio.RunAsync("replay", recording, "--once", "--json", "--window", "3600");
            replayCode.Should().Be(ExitCodes.Success, replayError);
            EscalationsSnapshot escalations = SnapshotJson.Deserialize(json)!.Schedulers.Single(s => s.Name == "worker").Escalations;
            escalations.EndedInWindow.Should().BeGreaterThanOrEqualTo(2);
            escalations.LongestEnded!.Work.Should().Be("PriorityLock 'lease' region");
            escalations.InForce.Should().ContainSingle(e => e.Work == "PriorityLock 'ledger' region" && e.Cause == "lock" && e.ToLevel == 2);
            escalations.LongLockWaits.Should().ContainSingle(w => w.Lock == "the PriorityLock 'ledger'" && w.HolderRaised);

            string chrome = Path.Combine(directory, "trace.json");
            (int chromeCode, _, string chromeError) = await Prio.RunAsync("replay", recording, "--chrome", chrome);
            chromeCode.Should().Be(ExitCodes.Success, chromeError);
            using JsonDocument document = JsonDocument.Parse(File.ReadAllText(chrome));
            var events = document.RootElement.GetProperty("traceEvents").EnumerateArray().ToList();
            JsonElement track = events.Single(e => e.GetProperty("ph").GetString() == "M" && e.GetProperty("args").GetProperty("name").GetString() == "worker / escalations");
            int tid = track.GetProperty("tid").GetInt32();
            var slices = events.Where(e => e.GetProperty("ph").GetString() == "X" && e.GetProperty("cat").GetString() == "escalation").ToList();
            slices.Should().OnlyContain(e => e.GetProperty("tid").GetInt32() == tid, "every escalation is on its scheduler's escalations track");
            slices.Count(e => e.GetProperty("name").GetString() == "PriorityLock 'lease' region: level 0 raised to 2").Should().BeGreaterThanOrEqualTo(2);
            JsonElement held = slices.Single(e => e.GetProperty("name").GetString() == "PriorityLock 'ledger' region: level 0 raised to 2");
            held.GetProperty("args").GetProperty("cause").GetString().Should().Be("lock");
            held.GetProperty("args").GetProperty("ongoing").GetBoolean().Should().BeTrue("it was still raised when the recording ended");
            held.GetProperty("dur").GetDouble().Should().BeGreaterThan(0);
            events.Should().ContainSingle(e => e.GetProperty("ph").GetString() == "i" && e.GetProperty("name").GetString() == "LockWaitLong")
                .Which.GetProperty("args").GetProperty("message").GetString().Should().Contain("the PriorityLock 'ledger'");
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>Runs <paramref name="command"/> in a target with <c>prio --once</c> attached (a window of an hour, so that nothing the
    /// scenario did leaves it however slow the machine), then detaches it with q; returns the snapshot (JSON) or the text.</summary>
    private static async Task<(Snapshot Snapshot, string Output)> OnceAsync(string command, bool json)
    {
        await using TestTarget target = await TestTarget.StartAsync();
        string[] args = [target.Id.ToString(CultureInfo.InvariantCulture), "--once", "--for", "600", "--window", "3600", .. json ? ["--json"] : Array.Empty<string>()];
        using Prio.Running prio = Prio.Start(args);
        await target.WaitForLineAsync("inspector on");
        await target.SendAsync(command);
        (int exitCode, string output, string error) = await prio.QuitAsync();
        exitCode.Should().Be(ExitCodes.Success, error);
        return (json ? SnapshotJson.Deserialize(output)! : null!, output);
    }
}
