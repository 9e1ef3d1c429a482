using System;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Linq;
using System.Threading;

namespace PriorityAsync.AbHarness;

/// <summary>
/// For <c>run --attach-b</c>: a child asked to (<see cref="Variable"/>) waits, before it measures, until a session enables the
/// PriorityAsync event source's Inspector keyword (0x2), that is until the inspector is attached, and 3 s more. The source is found by its name, and
/// a first (empty) context makes the library create it, so any side that has the source can be measured this way.
/// </summary>
public static class InspectorGate
{
    public const string Variable = "ABHARNESS_WAIT_FOR_INSPECTOR";

    public static void WaitIfAsked()
    {
        if (Environment.GetEnvironmentVariable(Variable) != "1")
        {
            return;
        }

        PriorityContext.Run(() => { }); // the library's event source exists from the first scheduler on
        var clock = Stopwatch.StartNew();
        while (EventSource.GetSources().FirstOrDefault(s => s.Name == "PriorityAsync") is not { } source
               || !source.IsEnabled(EventLevel.Informational, (EventKeywords)0x2))
        {
            if (clock.Elapsed > TimeSpan.FromSeconds(60))
            {
                throw new InvalidOperationException("No inspector attached within 60 s (the side may have no Inspector keyword).");
            }

            Thread.Sleep(10);
        }

        // The inspector's own start-up (its JIT, its first reads) competes for the cores: measure the attached steady state after it.
        Thread.Sleep(TimeSpan.FromSeconds(3));
    }
}
