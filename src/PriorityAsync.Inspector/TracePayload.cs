using System;
using System.Globalization;
using Microsoft.Diagnostics.Tracing;

namespace PriorityAsync.Inspector;

/// <summary>An EventPipe event's payload, read by field name for the model.</summary>
internal sealed class TracePayload(TraceEvent data) : IPayload
{
    public int Int(string name) => Convert.ToInt32(Value(name) ?? 0, CultureInfo.InvariantCulture);

    public long Long(string name) => Convert.ToInt64(Value(name) ?? 0L, CultureInfo.InvariantCulture);

    public double Double(string name) => Convert.ToDouble(Value(name) ?? 0.0, CultureInfo.InvariantCulture);

    public string String(string name) => Value(name) as string ?? string.Empty;

    public bool Has(string name) => data.PayloadIndex(name) >= 0;

    private object? Value(string name) => data.PayloadIndex(name) >= 0 ? data.PayloadByName(name) : null;
}
