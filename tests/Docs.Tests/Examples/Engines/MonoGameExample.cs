// begin-snippet: host-driven-monogame
// Needs: MonoGame 3.8 or FNA, in a net10.0 project (compiled here against stand-ins of Game and GameTime).
using System;
using Microsoft.Xna.Framework;
using PriorityAsync;

public class MyGame : Game
{
    private PriorityContextDriver _continuations = null!;

    protected override void Initialize()
    {
        // Run() calls this on the game's thread, before the first frame.
        _continuations = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3, TimeSlice = null });
        base.Initialize();
    }

    protected override void Update(GameTime gameTime)
    {
        // ... the game's own update ...
        _continuations.Drain(TimeSpan.FromMilliseconds(4), alwaysDrainFromLevel: 2);
        base.Update(gameTime);
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _continuations.Dispose();
        }

        base.Dispose(disposing);
    }
}
// end-snippet
