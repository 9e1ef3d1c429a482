using System.Text.Json;
using System.Text.Json.Serialization;

namespace PriorityAsync.Inspector;

/// <summary>The <c>--once --json</c> output: the snapshot's records, camel case, nulls kept (a field is always there).</summary>
internal static class SnapshotJson
{
    private static readonly JsonSerializerOptions s_options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
    };

    public static string Serialize(Snapshot snapshot) => JsonSerializer.Serialize(snapshot, s_options);

    public static Snapshot? Deserialize(string json) => JsonSerializer.Deserialize<Snapshot>(json, s_options);
}
