using System.Collections.Generic;

namespace PriorityAsync.Inspector;

/// <summary>What the inspector knows at one moment: the view draws it, <c>--once --json</c> prints it. Immutable.</summary>
/// <param name="Schema">The snapshot's JSON schema version (docs/inspector.md).</param>
/// <param name="ProcessId">The target's process id.</param>
/// <param name="ProcessName">The target's process name.</param>
/// <param name="AttachedForSeconds">Seconds since the session started (of the recording, when replayed).</param>
/// <param name="WindowSeconds">The window the rates, percentiles and top callbacks cover.</param>
/// <param name="Schedulers">The schedulers, in the order they were first seen.</param>
/// <param name="Events">Faults, drops, escaped exceptions and stalls, newest last.</param>
/// <param name="Warnings">The warnings, newest last.</param>
/// <param name="LostEvents">Events the runtime dropped because the inspector read too slowly (0 normally).</param>
internal sealed record Snapshot(
    int Schema,
    int ProcessId,
    string ProcessName,
    double AttachedForSeconds,
    double WindowSeconds,
    IReadOnlyList<SchedulerSnapshot> Schedulers,
    IReadOnlyList<InspectorEvent> Events,
    IReadOnlyList<Warning> Warnings,
    long LostEvents);
