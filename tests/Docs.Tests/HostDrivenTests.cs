using Docs.Tests.Examples;
using PriorityAsync;

namespace Docs.Tests;

/// <summary>docs/host-driven.md: the frame loop it shows runs the main thread's continuations in its drains, highest level first, and
/// gives the thread back as it found it.</summary>
public sealed class HostDrivenTests
{
    [Fact]
    public void FrameLoop_ContinuationsOfEveryLevel_RunInTheFramesDrainsHighestFirst()
    {
        (List<string> order, int frames, SynchronizationContext? after) = OwnThread.Run(
            () =>
            {
                var order = new List<string>();
                int frame = 0;
                HostDrivenExamples.FrameLoop(
                    running: () => ++frame <= 1 || (order.Count < 4 && frame < 1_000), // the budget is real time: at a high load a drain may
                                                                                         // run one item only, so frames go on until all ran
                    Update: () =>
                    {
                        if (frame == 1)
                        {
                            _ = Awaiting(order); // the game's own code on the main thread, awaiting
                            PriorityContext context = PriorityContext.Current!;
                            context.GetSynchronizationContext(0).Post(_ => order.Add("loading (0)"), null);
                            context.GetSynchronizationContext(2).Post(_ => order.Add("input (2)"), null);
                        }
                    },
                    Render: () => { });
                return (order, frame, SynchronizationContext.Current);
            },
            "the frame loop");

        order.Should().Equal("input (2)", "awaiting: level 0", "after Yield(2): level 2", "loading (0)");
        frames.Should().BeLessThan(1_000);
        after.Should().BeNull("disposing the driver gave the thread back its former context");

        static async Task Awaiting(List<string> order)
        {
            await Task.Yield(); // comes back in a drain, at the default level
            order.Add($"awaiting: level {Priority.CurrentLevel}");
            await Priority.CurrentScheduler!.Yield(2);
            order.Add($"after Yield(2): level {Priority.CurrentLevel}");
        }
    }
}
