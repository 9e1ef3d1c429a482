using System.Diagnostics.Metrics;
using System.IO;
using PriorityAsync;
using Snippets;

namespace Docs.Tests;

/// <summary>docs/observability.md shows the meter as it is: every tag the instruments carry, by its name, in 120 columns.</summary>
public sealed class ObservabilityPageTests
{
    private readonly string _page = Path.Combine(Repository.FindRoot(AppContext.BaseDirectory), "docs", "observability.md");

    [Fact]
    public void ObservabilityPage_EveryLine_FitsIn120Columns()
    {
        File.ReadAllLines(_page).Select((line, i) => (line, i)).Where(l => l.line.Length > 120)
            .Select(l => $"docs/observability.md:{l.i + 1}: {l.line.Length} columns").Should().BeEmpty();
    }

    [Fact]
    public void ObservabilityPage_TagsOfARunningLoop_AreTheOnesThePageNames()
    {
        var tags = new HashSet<string>(StringComparer.Ordinal);
        using (var listener = new MeterListener())
        {
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "PriorityAsync")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            listener.SetMeasurementEventCallback<long>((_, _, measured, _) => Collect(measured));
            listener.SetMeasurementEventCallback<double>((_, _, measured, _) => Collect(measured));
            listener.Start();
            OwnThread.Run(() =>
            {
                PriorityContext.Run(async () =>
                {
                    await Priority.Prioritize(2);
                    await Priority.Yield();
                    listener.RecordObservableInstruments();
                }, new PriorityContextOptions { Name = "page", Levels = 3 });
                return 0;
            }, "a loop observed by a MeterListener");
        }

        string page = File.ReadAllText(_page);
        tags.Should().Contain(["priorityasync.context", "priorityasync.level", "priorityasync.scheduler.kind"]);
        tags.Where(tag => !page.Contains($"`{tag}`", StringComparison.Ordinal)).Should().BeEmpty("the page names every tag the meter gives");
        page.Should().NotContain("[level=", "a listing on the page shows the tags by their names");

        void Collect(ReadOnlySpan<KeyValuePair<string, object?>> measured)
        {
            lock (tags)
            {
                foreach (KeyValuePair<string, object?> tag in measured)
                {
                    tags.Add(tag.Key);
                }
            }
        }
    }
}
