using System;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace LeaseWorker;

/// <summary>A duration in the JSON report: a number of seconds, to the microsecond.</summary>
public sealed class SecondsConverter : JsonConverter<TimeSpan>
{
    public override TimeSpan Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        TimeSpan.FromSeconds(reader.GetDouble());

    public override void Write(Utf8JsonWriter writer, TimeSpan value, JsonSerializerOptions options)
    {
        ArgumentNullException.ThrowIfNull(writer);
        writer.WriteNumberValue(Math.Round(value.TotalSeconds, 6));
    }
}
