using System.IO;
using System.Text.Json;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Diagnostics;

[Collection(DiagnosticsCollection.Name)]
public sealed class PriorityTraceRecorderTests
{
    [Fact]
    public async Task WriteChromeTrace_KnownWorkload_ParsesWithOneSlicePerItemOnPerLevelTracks()
    {
        string name = "trace-" + Guid.NewGuid().ToString("N");
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start();
        await Task.Run(() => PriorityContext.Run(
            () =>
            {
                PriorityContext context = PriorityContext.Current!;
                for (int i = 0; i < 5; i++)
                {
                    context.GetSynchronizationContext(2).Post(Step, null);
                    context.GetSynchronizationContext(1).Post(Step, null);
                }
            },
            new PriorityContextOptions { Name = name, Levels = 3 })).WithTimeout("the context");
        recorder.Stop();

        using JsonDocument trace = Write(recorder);
        List<JsonElement> slices = Slices(trace, name);
        slices.Should().HaveCount(11, "the entry point and 10 posted items ran");
        slices.Count(s => s.GetProperty("args").GetProperty("level").GetInt32() == 2).Should().Be(5);
        slices.Where(s => s.GetProperty("args").GetProperty("level").GetInt32() != 0)
            .Should().OnlyContain(s => s.GetProperty("name").GetString() == "PriorityTraceRecorderTests.Step");
        slices.Should().OnlyContain(s => s.GetProperty("dur").GetDouble() >= 0 && s.GetProperty("ts").GetDouble() >= 0);

        // One track per level that ran, named after the context, each slice on its level's track.
        Dictionary<int, string> tracks = trace.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Where(e => e.GetProperty("ph").GetString() == "M" && e.GetProperty("name").GetString() == "thread_name")
            .ToDictionary(e => e.GetProperty("tid").GetInt32(), e => e.GetProperty("args").GetProperty("name").GetString()!);
        foreach (JsonElement slice in slices)
        {
            tracks[slice.GetProperty("tid").GetInt32()].Should().Be($"{name} / level {slice.GetProperty("args").GetProperty("level").GetInt32()}");
        }

        // Strict priority shows in the trace: the 5 level-2 slices precede every level-1 slice.
        slices.OrderBy(s => s.GetProperty("ts").GetDouble()).Skip(1).Take(5)
            .Should().OnlyContain(s => s.GetProperty("args").GetProperty("level").GetInt32() == 2);
        trace.RootElement.GetProperty("otherData").GetProperty("overflow").GetInt64().Should().Be(0);
    }

    [Fact]
    public async Task Record_AsyncMethodContinuation_NamedAfterTheAsyncMethod()
    {
        string name = "trace-" + Guid.NewGuid().ToString("N");
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start();
        await Task.Run(() => PriorityContext.Run(WorkerAsync, new PriorityContextOptions { Name = name, Levels = 2 })).WithTimeout("the context");
        recorder.Stop();

        using JsonDocument trace = Write(recorder);
        Slices(trace, name).Skip(1).Select(s => s.GetProperty("name").GetString())
            .Should().Equal(new[] { "PriorityTraceRecorderTests.WorkerAsync", "PriorityTraceRecorderTests.WorkerAsync" }, "the two continuations after the entry item");
    }

    [Fact]
    public async Task Record_BufferFull_OverflowCountedNotBlocking()
    {
        string name = "trace-" + Guid.NewGuid().ToString("N");
        using PriorityTraceRecorder recorder = PriorityTraceRecorder.Start(capacity: 5);
        await Task.Run(() => PriorityContext.Run(
            () =>
            {
                for (int i = 0; i < 20; i++)
                {
                    PriorityContext.Current!.GetSynchronizationContext(0).Post(Step, null);
                }
            },
            new PriorityContextOptions { Name = name })).WithTimeout("the context");
        recorder.Stop();

        recorder.RecordedCount.Should().Be(5);
        recorder.OverflowCount.Should().Be(16);
        using JsonDocument trace = Write(recorder);
        Slices(trace, name).Should().HaveCount(5);
        trace.RootElement.GetProperty("otherData").GetProperty("overflow").GetInt64().Should().Be(16);
    }

    [Fact]
    public void Start_WhileAnotherRecords_ThrowsAndStopAllowsANewOne()
    {
        PriorityTraceRecorder first = PriorityTraceRecorder.Start(capacity: 1);
        try
        {
            Action second = () => PriorityTraceRecorder.Start(capacity: 1);
            second.Should().Throw<InvalidOperationException>().WithMessage("*already recording*");
            first.IsRecording.Should().BeTrue();
        }
        finally
        {
            first.Dispose();
        }

        first.IsRecording.Should().BeFalse();
        using PriorityTraceRecorder third = PriorityTraceRecorder.Start(capacity: 1);
        third.IsRecording.Should().BeTrue();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(PriorityTraceRecorder.MaxCapacity + 1)]
    public void Start_CapacityOutOfRange_Throws(int capacity)
    {
        Action start = () => PriorityTraceRecorder.Start(capacity);
        start.Should().Throw<ArgumentOutOfRangeException>().WithParameterName(nameof(capacity));
    }

    private static void Step(object? state)
    {
    }

    private static async Task WorkerAsync()
    {
        PriorityContext context = PriorityContext.Current!;
        await context.Yield(1);
#pragma warning disable PA0001 // a pool-completed await on purpose: the trace must show the resume through SynchronizationContext.Post
        await Task.Delay(1); // resumes through SynchronizationContext.Post, with the runtime's callback
#pragma warning restore PA0001
    }

    private static JsonDocument Write(PriorityTraceRecorder recorder)
    {
        using var stream = new MemoryStream();
        recorder.WriteChromeTrace(stream);
        return JsonDocument.Parse(stream.ToArray());
    }

    private static List<JsonElement> Slices(JsonDocument trace, string context) =>
        trace.RootElement.GetProperty("traceEvents").EnumerateArray()
            .Where(e => e.GetProperty("ph").GetString() == "X" && e.GetProperty("args").GetProperty("context").GetString() == context)
            .ToList();
}
