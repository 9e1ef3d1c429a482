using System.IO;
using System.Xml.Linq;

namespace LeaseWorker.Tests;

public class TimelineTests
{
    private static readonly XNamespace s_svg = "http://www.w3.org/2000/svg";

    [Fact]
    public void TryParse_TraceAndTimeline_PathsKept()
    {
        CommandLine.TryParse(["--modes", "single,priority", "--trace", "t.json", "--timeline=t.svg"], out Options options, out _, out string? error)
            .Should().BeTrue(error);
        (options!.TracePath, options.TimelinePath).Should().Be(("t.json", "t.svg"));
    }

    [Fact]
    public void TryParse_TraceWithoutPriorityMode_OneLineError()
    {
        CommandLine.TryParse(["--modes", "single", "--trace", "t.json"], out _, out _, out string? error).Should().BeFalse();
        error.Should().Contain("--trace").And.NotContain("\n");
    }

    [Fact]
    public async Task TimelineSvg_SingleAndPriorityRuns_WellFormedWithEveryMessageLaneAndTheLostLeasesOfTheBus()
    {
        Settings settings = new Settings { TimeScale = 0.02 } with { Messages = 5, Steps = 3 };
        var single = new Timeline("single");
        var priority = new Timeline("priority");
        ModeResult singleResult = await Simulation.RunAsync("single", settings, single);
        ModeResult priorityResult = await Simulation.RunAsync("priority", settings, priority);

        using var stream = new MemoryStream();
        TimelineSvg.Write(stream, [single, priority], settings.Describe());
        XDocument svg = XDocument.Parse(System.Text.Encoding.UTF8.GetString(stream.ToArray())); // throws unless well-formed

        string[] texts = svg.Descendants(s_svg + "text").Select(t => t.Value).ToArray();
        texts.Should().Contain(Enumerable.Range(1, 5).Select(m => $"#{m}"), "every message has a lane");
        texts.Should().Contain(t => t.StartsWith("single:", StringComparison.Ordinal)).And.Contain(t => t.StartsWith("priority:", StringComparison.Ordinal));

        foreach ((Timeline timeline, ModeResult result) in new[] { (single, singleResult), (priority, priorityResult) })
        {
            // Every delivered message shows receive and CPU spans; the crosses are the leases the bus counted as lost.
            timeline.Spans.Where(s => s.Kind == SpanKind.Receive).Select(s => s.Message).Should().BeEquivalentTo(Enumerable.Range(1, result.Bus.Received));
            timeline.Spans.Where(s => s.Kind == SpanKind.Cpu).Select(s => s.Message).Distinct().Should().HaveCount(result.Bus.Received);
            timeline.Lost.Select(l => l.Message).Distinct().Should().HaveCount(result.Bus.Lost, $"{timeline.Mode} lost {result.Bus.Lost}");
        }

        svg.Descendants(s_svg + "path").Count(p => (string?)p.Attribute("stroke") == "#d00000")
            .Should().Be(single.Lost.Count + priority.Lost.Count + 1, "one cross per lost lease, and one in the legend");
    }
}
