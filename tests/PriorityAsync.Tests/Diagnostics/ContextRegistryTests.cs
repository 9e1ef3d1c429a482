using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

[Collection(DiagnosticsCollection.Name)]
public sealed class ContextRegistryTests
{
    [Fact]
    public async Task Live_ManyLoopsStartAndEndConcurrently_EachListedWhileRunningAndNoneAfter()
    {
        const int loops = 32;
        var contexts = new PriorityContextThread[loops];
        for (int i = 0; i < loops; i++)
        {
            contexts[i] = new PriorityContextThread(new PriorityContextOptions { Name = $"registry-{i}" });
        }

        // Each loop checks from inside itself that it is listed, then they all end at once.
        bool[] listed = new bool[loops];
        await Task.WhenAll(contexts.Select((thread, i) => thread.Context.RunOn(0, () => listed[i] = ContextRegistry.Live.Contains(thread.Context))))
            .WithTimeout("every loop ran its check");
        await Task.WhenAll(contexts.Select(thread => Task.Run(thread.Dispose))).WithTimeout("every loop ended");

        listed.Should().OnlyContain(x => x);
        ContextRegistry.Live.Should().NotIntersectWith(contexts.Select(thread => thread.Context));
    }
}
