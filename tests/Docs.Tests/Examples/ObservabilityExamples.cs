using PriorityAsync;
using static PriorityAsync.Priority;

namespace Docs.Tests.Examples;

/// <summary>The recorder block of docs/observability.md (tools/Snippets copies it there); ObservabilityTests runs it.</summary>
public static class ObservabilityExamples
{
    /// <summary>Records one small loop named "demo" and writes the Chrome trace to <paramref name="tracePath"/>; returns the items recorded.</summary>
    public static int RecordTrace(string tracePath)
    {
        // begin-snippet: observability-recorder
        // Needs: using PriorityAsync; using static PriorityAsync.Priority; and a tracePath to write to.
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start();   // records every loop in the process from here
        PriorityContext.Run(async () =>
        {
            await Prioritize(2);
            await Yield();                                                      // an item at level 2
        }, new PriorityContextOptions { Name = "demo", Levels = 3 });
        recorder.Stop();
        recorder.WriteChromeTrace(tracePath);                                  // open it in https://ui.perfetto.dev
        // end-snippet
        return recorder.RecordedCount;
    }
}
