using PriorityAsync;

namespace Docs.Tests.Examples;

/// <summary>The engine-free code block of docs/host-driven.md (tools/Snippets copies it there); HostDrivenTests runs it.</summary>
public static class HostDrivenExamples
{
    /// <summary>A frame loop of its own: attach on the main thread, drain once per frame within a budget, dispose at the end.</summary>
    public static void FrameLoop(Func<bool> running, Action Update, Action Render)
    {
        // begin-snippet: host-driven-frame-loop
        // Needs: a method on the thread that runs the frames, with the game's running(), Update() and Render().
        // That thread's continuations queue here from now on, by level.
        using PriorityContextDriver loop = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3 });

        while (running())
        {
            Update();                                                           // the game's own logic
            loop.Drain(TimeSpan.FromMilliseconds(4), alwaysDrainFromLevel: 2);  // input (2) always, then 1, then 0 while 4 ms last
            Render();
        }
        // end-snippet
    }
}
