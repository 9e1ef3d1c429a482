using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using Spectre.Console;
using Spectre.Console.Rendering;

namespace PriorityAsync.Inspector;

/// <summary>Draws a <see cref="Snapshot"/> with Spectre.Console: the same renderable for the live view, <c>--once</c> without
/// <c>--json</c>, replay, and the tests' fixed-size console. Figures never wrap inside their cells.</summary>
internal static class SnapshotView
{
    /// <param name="snapshot">What to draw.</param>
    /// <param name="status">The header's last word: attached, recording, detached, ...</param>
    /// <param name="keyHint">Whether to end with the key that quits (only the live view on a terminal has keys).</param>
    /// <param name="expand">Whether panels and tables take the console's width (a terminal), or their natural width (plain text).</param>
    public static IRenderable Render(Snapshot snapshot, string status, bool keyHint = true, bool expand = true)
    {
        var rows = new List<IRenderable>
        {
            new Markup(
                $"[bold]prio[/] · PriorityAsync inspector · pid {snapshot.ProcessId} ([bold]{Escape(snapshot.ProcessName)}[/]) · " +
                $"{snapshot.AttachedForSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s · window {snapshot.WindowSeconds.ToString("0", CultureInfo.InvariantCulture)} s · {Escape(status)}"),
        };

        if (snapshot.Schedulers.Count == 0)
        {
            rows.Add(new Markup("[grey]No PriorityAsync scheduler is running in this process yet.[/]"));
        }

        foreach (SchedulerSnapshot scheduler in snapshot.Schedulers)
        {
            rows.Add(Scheduler(scheduler, expand));
        }

        rows.Add(Warnings(snapshot));
        rows.Add(Events(snapshot));
        if (snapshot.LostEvents > 0)
        {
            rows.Add(new Markup($"[red]{snapshot.LostEvents} events lost: the inspector read too slowly; figures may be incomplete.[/]"));
        }

        if (keyHint)
        {
            rows.Add(new Markup("[grey]q: quit (the target is left as it was)[/]"));
        }

        return new Rows(rows);
    }

    private static Panel Scheduler(SchedulerSnapshot scheduler, bool expand)
    {
        var levels = new Table().Border(TableBorder.Simple);
        levels.Expand = expand;
        levels.AddColumn(new TableColumn("level").NoWrap());
        levels.AddColumn(Figure("queued"));
        levels.AddColumn(Figure("running"));
        levels.AddColumn(Figure("start/s"));
        levels.AddColumn(Figure("wait p50"));
        levels.AddColumn(Figure("wait p99"));
        levels.AddColumn(Figure("run p99"));
        levels.AddColumn(Figure("oldest"));
        foreach (LevelSnapshot level in scheduler.Levels)
        {
            string approximate = level.WaitSource == "probes" ? "~" : string.Empty;
            levels.AddRow(
                level.Level.ToString(CultureInfo.InvariantCulture),
                level.Queued.ToString(CultureInfo.InvariantCulture),
                level.Running?.ToString(CultureInfo.InvariantCulture) ?? "-",
                level.StartedPerSecond.ToString("0.#", CultureInfo.InvariantCulture),
                level.WaitP50Ms is { } p50 ? approximate + InspectorModel.Ms(p50) : "-",
                level.WaitP99Ms is { } p99 ? approximate + InspectorModel.Ms(p99) : "-",
                level.RunP99Ms is { } run ? InspectorModel.Ms(run) : "-",
                level.OldestWaitMs is { } oldest ? InspectorModel.Ms(oldest) : "-");
        }

        var body = new List<IRenderable> { levels };
        foreach (ThreadSnapshot thread in scheduler.ThreadStates)
        {
            string label = scheduler.Kind == "PriorityThreadPool" ? $"thread #{thread.Thread}" : "loop";
            string state = thread.State switch
            {
                "idle" => "[grey]idle[/]",
                "blocked" => $"[red]blocked in a synchronous wait[/] in {What(thread)}",
                _ => $"[green]runs[/] {What(thread)}",
            };
            body.Add(new Markup($"{label}: {state}"));
        }

        body.AddRange(Escalations(scheduler.Escalations));
        if (scheduler.TopCallbacks.Count > 0)
        {
            var top = new Table().Border(TableBorder.Simple);
            top.Expand = expand;
            top.AddColumn("callback (most time first)");
            top.AddColumn(Figure("level"));
            top.AddColumn(Figure("count"));
            top.AddColumn(Figure("total"));
            top.AddColumn(Figure("max"));
            foreach (CallbackStats callback in scheduler.TopCallbacks.Take(6))
            {
                top.AddRow(
                    new Text(callback.Method),
                    new Text(callback.Level.ToString(CultureInfo.InvariantCulture)),
                    new Text(callback.Count.ToString(CultureInfo.InvariantCulture) + (callback.Sampled ? " sampled" : string.Empty)),
                    new Text(InspectorModel.Ms(callback.TotalMs)),
                    new Text(InspectorModel.Ms(callback.MaxMs)));
            }

            body.Add(top);
        }

        string timers = $"timers: {scheduler.ArmedTimers} armed";
        if (scheduler.LastLateTimer is { } late)
        {
            timers += $", last late one fired {InspectorModel.Ms(late.LateMs)} late ({late.Method}, level {late.Level}, {late.AgoSeconds.ToString("0", CultureInfo.InvariantCulture)} s ago)";
        }

        body.Add(new Text(timers));
        string slice = scheduler.TimeSliceMs is { } ms ? "slice " + InspectorModel.Ms(ms) : "no slice";
        string stall = scheduler.StallTimeoutMs is { } stallMs ? "stall " + InspectorModel.Ms(stallMs) : "no stall watchdog";
        string observed = scheduler.ObservesEveryItem ? "every item observed" : "sampled (high item rate)";
        string header = $"{scheduler.Name} · {scheduler.Kind} · {scheduler.Threads} thread{(scheduler.Threads == 1 ? string.Empty : "s")} · " +
            $"{scheduler.LevelCount} levels · {scheduler.Policy} · {slice} · {stall} · {observed}{(scheduler.Running ? string.Empty : " · ENDED")}";
        if (!expand)
        {
            // At its natural width a panel may be narrower than its header, which Spectre would cut to "...": a line of its own.
            body.Insert(0, new Text(header));
            return new Panel(new Rows(body));
        }

        return new Panel(new Rows(body)).Header(Escape(header)).Expand();
    }

    // A figure's column: right-aligned, and never wrapped ("12.6 ms" split over two lines reads as two figures).
    private static TableColumn Figure(string name) => new TableColumn(name).RightAligned().NoWrap();

    private static string What(ThreadSnapshot thread)
    {
        string duration = (thread.Exact ? string.Empty : ">= ") + InspectorModel.Ms(thread.RunningForMs);
        string level = thread.Level is { } l ? $" at level {l}" : string.Empty;
        return thread.Method is { } method
            ? $"[bold]{Escape(method)}[/]{level} for {duration}"
            : $"an item it does not name (a library older than the inspector){level} for {duration}";
    }

    /// <summary>The escalations line (only when the scheduler raised work in the window or has raised work now), one line per escalation
    /// in force (the oldest five), and one per long lock wait (the latest three).</summary>
    private static IEnumerable<IRenderable> Escalations(EscalationsSnapshot escalations)
    {
        if (escalations.InForce.Count > 0 || escalations.EndedInWindow > 0)
        {
            string ended = escalations.LongestEnded is { } longest
                ? $"{escalations.EndedInWindow} ended in the window, longest {InspectorModel.Ms(longest.RaisedForMs)} ({Raised(longest)})"
                : "none ended in the window";
            yield return new Markup($"escalations: {escalations.InForce.Count} in force, {Escape(ended)}");
        }

        foreach (EscalationSnapshot escalation in escalations.InForce.Take(5))
        {
            yield return new Markup($"  [yellow]raised[/] {Escape(Raised(escalation))} for {InspectorModel.Ms(escalation.RaisedForMs)}");
        }

        if (escalations.InForce.Count > 5)
        {
            yield return new Markup($"  [grey]and {escalations.InForce.Count - 5} more[/]");
        }

        foreach (LockWaitSnapshot wait in escalations.LongLockWaits.TakeLast(3))
        {
            string holder = wait.HolderRaised ? "holder raised, still holding" : "holder could not be raised";
            yield return new Markup(
                $"[yellow]long lock wait[/] {At(wait.AtSeconds)}: {Escape(wait.Lock)}, waiter at level {wait.Level}, waited {InspectorModel.Ms(wait.WaitedMs)}, " +
                $"held by {Escape(wait.Holders)} ({holder})");
        }
    }

    /// <summary>"work from level F to T (cause: by)".</summary>
    private static string Raised(EscalationSnapshot escalation)
    {
        string cause = escalation.Cause is { } kind ? $"{kind}: {escalation.By}" : "raised before the inspector attached";
        return $"{escalation.Work} from level {escalation.FromLevel} to {escalation.ToLevel} ({cause})";
    }

    private static IRenderable Warnings(Snapshot snapshot)
    {
        if (snapshot.Warnings.Count == 0)
        {
            return new Markup("[green]No warnings.[/]");
        }

        var lines = new List<IRenderable> { new Markup("[bold yellow]Warnings[/] (newest last)") };
        foreach (Warning warning in snapshot.Warnings.TakeLast(6))
        {
            string count = warning.Count > 1 ? $" (x{warning.Count})" : string.Empty;
            lines.Add(new Markup($"[yellow]![/] {At(warning.AtSeconds)} [yellow]{warning.Kind}[/]{count}: {Escape(warning.Message)}"));
            lines.Add(new Markup($"    [grey]{Escape(warning.Advice)}[/]"));
        }

        return new Rows(lines);
    }

    private static IRenderable Events(Snapshot snapshot)
    {
        if (snapshot.Events.Count == 0)
        {
            return new Markup("[grey]No faults, drops or stalls.[/]");
        }

        var lines = new List<IRenderable> { new Markup("[bold]Faults, drops, stalls[/] (newest last)") };
        foreach (InspectorEvent e in snapshot.Events.TakeLast(5))
        {
            string method = e.Method.Length > 0 ? " " + e.Method : string.Empty;
            lines.Add(new Markup($"{At(e.AtSeconds)} [red]{e.Kind}[/] {Escape(e.Scheduler)} level {e.Level}{Escape(method)}: {Escape(e.Detail)}"));
        }

        return new Rows(lines);
    }

    private static string At(double seconds) => "+" + seconds.ToString("0.0", CultureInfo.InvariantCulture) + " s";

    private static string Escape(string text) => Markup.Escape(text);
}
