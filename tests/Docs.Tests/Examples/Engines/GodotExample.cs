// begin-snippet: host-driven-godot
// Needs: Godot 4 with .NET, in a net10.0 project (compiled here against stand-ins of Godot's Node).
using System;
using Godot;
using PriorityAsync;

public partial class GameRoot : Node
{
    private PriorityContextDriver _continuations = null!;

    public override void _Ready()
    {
        // The main thread's awaits now come back here, by level; what captured Godot's own context still drains there.
        _continuations = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3, TimeSlice = null });
    }

    public override void _Process(double delta)
    {
        // Once per frame: input handlers (level 2) always, then animation (1), then loading (0) while 4 ms last.
        _continuations.Drain(TimeSpan.FromMilliseconds(4), alwaysDrainFromLevel: 2);
    }

    public override void _ExitTree() => _continuations.Dispose();
}
// end-snippet
