using System;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Threading;
using BenchmarkDotNet.Attributes;

namespace PriorityAsync.Benchmarks;

/// <summary>
/// The cost per item of the diagnostics: post + drain from the loop thread (as <see cref="PostDrainBenchmarks"/>) with
/// nothing listening, with a <see cref="MeterListener"/> enabling both timing histograms, with a <see cref="PriorityTraceRecorder"/>
/// recording, and with an in-process <see cref="EventListener"/> on the <c>PriorityAsync</c> event source.
/// </summary>
/// <remarks>Run it alone (<c>--filter '*Diagnostics*'</c>): the listeners are process-wide. The recorder is rewound before each
/// invocation so that it always records (a full buffer would measure the cheaper overflow path).</remarks>
[BenchmarkCategory("Diagnostics")]
public class DiagnosticsBenchmarks
{
    public const int Items = 16_384;

    private static readonly SendOrPostCallback s_count = static state => ((DiagnosticsBenchmarks)state!)._ran++;

    private static readonly SendOrPostCallback s_done = static state => ((DiagnosticsBenchmarks)state!)._done.Set();

    private static readonly SendOrPostCallback s_postBatch = static state =>
    {
        var self = (DiagnosticsBenchmarks)state!;
        SynchronizationContext target = SynchronizationContext.Current!;
        for (int i = 0; i < Items; i++)
        {
            target.Post(s_count, self);
        }

        target.Post(s_done, self);
    };

    private readonly ManualResetEventSlim _done = new(false);
    private PriorityContextThread? _thread;
    private MeterListener? _meterListener;
    private PriorityTraceRecorder? _recorder;
    private NullEventListener? _eventListener;
    private long _ran;
    private double _sum;

    /// <summary>What listens while the loop runs.</summary>
    public enum Listening
    {
        Nothing,
        Histograms,
        TraceRecorder,
        EventListener,
    }

    [Params(Listening.Nothing, Listening.Histograms, Listening.TraceRecorder, Listening.EventListener)]
    public Listening Mode { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        switch (Mode)
        {
            case Listening.Histograms:
                _meterListener = new MeterListener
                {
                    InstrumentPublished = static (instrument, listener) =>
                    {
                        if (instrument.Meter.Name == "PriorityAsync" && instrument.Name.EndsWith(".duration", StringComparison.Ordinal))
                        {
                            listener.EnableMeasurementEvents(instrument);
                        }
                    },
                };
                _meterListener.SetMeasurementEventCallback<double>((_, value, _, _) => _sum += value);
                _meterListener.Start();
                break;
            case Listening.TraceRecorder:
                _recorder = PriorityTraceRecorder.Start(capacity: Items + 1);
                break;
            case Listening.EventListener:
                _eventListener = new NullEventListener();
                break;
        }

        // The loop reads what is listening when it starts.
        _thread = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Name = "bench" });
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _thread?.Dispose();
        _meterListener?.Dispose();
        _recorder?.Dispose();
        _eventListener?.Dispose();
    }

    [Benchmark(OperationsPerInvoke = Items, Description = "Post+drain, per item")]
    public void PostDrain()
    {
        _recorder?.Rewind();
        _done.Reset();
        _thread!.Context.GetSynchronizationContext(0).Post(s_postBatch, this);
        _done.Wait();
    }

    private sealed class NullEventListener : EventListener
    {
        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "PriorityAsync")
            {
                EnableEvents(eventSource, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
        }
    }
}
