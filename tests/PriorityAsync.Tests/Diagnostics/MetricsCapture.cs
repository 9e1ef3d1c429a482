using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>A MeterListener on the PriorityAsync meter that keeps the measurements of one context (by its name).</summary>
public sealed class MetricsCapture : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly string _contextName;

    public MetricsCapture(string contextName, params string[] instruments)
    {
        _contextName = contextName;
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "PriorityAsync" && (instruments.Length == 0 || instruments.Contains(instrument.Name)))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.Start();
    }

    public ConcurrentQueue<Recorded> Measurements { get; } = new();

    public void Collect() => _listener.RecordObservableInstruments();

    public List<Recorded> Of(string instrument) => Measurements.Where(m => m.Instrument == instrument).ToList();

    public void Clear() => Measurements.Clear();

    public void Dispose() => _listener.Dispose();

    private void Add(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var copy = new Dictionary<string, object?>();
        foreach (KeyValuePair<string, object?> tag in tags)
        {
            copy[tag.Key] = tag.Value;
        }

        if (copy.TryGetValue("priorityasync.context", out object? name) && (string?)name == _contextName)
        {
            Measurements.Enqueue(new Recorded(instrument.Name, instrument.Unit, value, copy));
        }
    }

    public sealed record Recorded(string Instrument, string? Unit, double Value, Dictionary<string, object?> Tags)
    {
        public int Level => (int)Tags["priorityasync.level"]!;
    }
}
