using OpenTelemetry;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>The PriorityAsync meter as an application exports it: through the OpenTelemetry SDK (here to its in-memory exporter).</summary>
[Collection(DiagnosticsCollection.Name)]
public sealed class OpenTelemetryExportTests
{
    [Fact]
    public async Task MeterProvider_KnownWorkload_ExportsCountsHistogramsAndQueueLengthPerLevel()
    {
        string name = "otel-" + Guid.NewGuid().ToString("N");
        var exported = new List<MetricSnapshot>();
        // begin-snippet: observability-opentelemetry
        // Needs: the OpenTelemetry package (using OpenTelemetry; using OpenTelemetry.Metrics;) and an exporter of yours.
        using MeterProvider provider = Sdk.CreateMeterProviderBuilder()
            .AddMeter("PriorityAsync")
            .AddInMemoryExporter(exported)
            .Build();
        // end-snippet

        await Task.Run(() => PriorityContext.Run(
            async () =>
            {
                PriorityContext context = PriorityContext.Current!;
                for (int i = 0; i < 7; i++)
                {
                    context.GetSynchronizationContext(2).Post(static _ => { }, null);
                }

                for (int i = 0; i < 3; i++)
                {
                    context.GetSynchronizationContext(1).Post(static _ => { }, null);
                }

                await context.Yield(0); // after the 10 items above
                context.GetSynchronizationContext(1).Post(static _ => { }, null); // still queued at the export below

                // Collect while the loop runs: observable instruments report live contexts only.
                provider.ForceFlush().Should().BeTrue();
            },
            new PriorityContextOptions { Name = name, Levels = 3 })).WithTimeout("the context");

        Dictionary<string, MetricSnapshot> metrics = exported.ToDictionary(m => m.Name);
        Dictionary<int, long> run = Points(metrics["priorityasync.work_item.count"], name, p => p.GetSumLong());
        run.Should().Equal(new Dictionary<int, long> { [0] = 2, [1] = 3, [2] = 7 }); // level 0: the entry and its continuation

        Dictionary<int, long> queued = Points(metrics["priorityasync.queue.length"], name, p => p.GetSumLong());
        queued.Should().Equal(new Dictionary<int, long> { [0] = 0, [1] = 1, [2] = 0 });

        MetricSnapshot runTime = metrics["priorityasync.work_item.run.duration"];
        runTime.Unit.Should().Be("s");
        runTime.MetricType.Should().Be(MetricType.Histogram);
        Points(runTime, name, p => p.GetHistogramCount())
            .Should().Equal(new Dictionary<int, long> { [0] = 1, [1] = 3, [2] = 7 }); // level 0: the continuation is still running
        Points(metrics["priorityasync.work_item.wait.duration"], name, p => p.GetHistogramCount())[2].Should().Be(7);
    }

    private static Dictionary<int, long> Points(MetricSnapshot metric, string context, Func<MetricPoint, long> value)
    {
        var points = new Dictionary<int, long>();
        foreach (MetricPoint point in metric.MetricPoints)
        {
            string? name = null;
            int level = -1;
            foreach (KeyValuePair<string, object?> tag in point.Tags)
            {
                if (tag.Key == "priorityasync.context")
                {
                    name = (string?)tag.Value;
                }
                else if (tag.Key == "priorityasync.level")
                {
                    level = (int)tag.Value!;
                }
            }

            if (name == context)
            {
                points[level] = value(point);
            }
        }

        return points;
    }
}
