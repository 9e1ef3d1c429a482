using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;
using System.Text.Json.Serialization;
using PriorityAsync.Benchmarks.Harness;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// One run's results as JSON (<c>BenchmarkDotNet.Artifacts/results.json</c>), so the tables and the chart can be printed again
/// from a run without running it again: <c>--results-from &lt;file&gt;</c>.
/// </summary>
public sealed record SavedResults(DateTime RunAtUtc, bool Quick, List<Measurement> Measurements, List<HarnessResult> Harness)
{
    private static readonly JsonSerializerOptions s_options = new()
    {
        WriteIndented = true,
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    public static SavedResults Load(string path) =>
        JsonSerializer.Deserialize<SavedResults>(File.ReadAllText(path), s_options)
        ?? throw new InvalidDataException($"{path} holds no results.");

    public void Save(string path) => File.WriteAllText(path, JsonSerializer.Serialize(this, s_options));
}
