using System;
using static FrameLoop.SampleFormat;

namespace FrameLoop;

/// <summary>The table and the verdict the program prints.</summary>
internal static class Report
{
    public const string ColumnHeader =
        "drain                                     frames  over budget  worst frame  input p50  input p99  background/s  wave loaded in (p50, max)";

    public static string Header(Settings s, string? loadAverage) => Invariant(
        $"A {s.FramesPerSecond} fps frame loop ({Ms(s.FramePeriod)} a frame: {Ms(s.Update)} update, the drain, {Ms(s.Render)} render), {SecondsText(s.Duration)} per drain, ") +
        (s.Virtual ? "on virtual time (exact at any load)." : Invariant($"on the machine's clock (load average {loadAverage ?? "unknown"}).")) +
        Environment.NewLine +
        Invariant($"Continuations: input ({s.InputsPerSecond}/s, {Ms(s.InputCost)} each, level 2); animation ({s.Animations} animations, {Ms(s.AnimationCost)} a step, level 1);") +
        Environment.NewLine +
        Invariant($"background loading every {SecondsText(s.WavePeriod)} (level 0): {s.Assets} assets read within {Ms(s.ReadSpread)}, parsed in {Ms(s.ParseMin)}-{Ms(s.ParseMax)} each, and a {Ms(s.Decompress)} decompression in {Ms(s.DecompressStep)} steps.");

    public static string Row(DrainResult r) => Invariant(
        $"{r.Drain,-40} {r.Frames,7}  {r.FramesOverBudget,11}  {Ms(r.WorstFrame),11}  {Ms(r.InputP50),9}  {Ms(r.InputP99),9}  {r.BackgroundPerSecond,12:0}  {Ms(r.WaveP50)}, {Ms(r.WaveMax)}");

    /// <summary>Whether PriorityAsync showed what the README says: no frame over budget, input p99 within a frame, the background
    /// moving; and one line saying so, with the FIFO drain's figures beside them.</summary>
    public static (bool Kept, string Text) Verdict(Settings s, DrainResult? fifo, DrainResult? priority)
    {
        if (priority is null)
        {
            return (true, "PriorityAsync was not run (--drains).");
        }

        bool frames = priority.FramesOverBudget == 0;
        bool input = priority.InputP99 <= s.FramePeriod;
        bool background = priority.BackgroundPerSecond > 0 && priority.Waves > 0 && priority.WaveMax < s.WavePeriod;
        string text = Invariant(
            $"PriorityAsync: no frame over budget: {YesNo(frames)}; input p99 within a frame ({Ms(s.FramePeriod)}): {YesNo(input)}; background moving (every wave loaded before the next): {YesNo(background)}.");
        if (fifo is not null)
        {
            text += Environment.NewLine + Invariant(
                $"FIFO: {fifo.FramesOverBudget} frame(s) over budget, worst {Ms(fifo.WorstFrame)}; input p99 {Ms(fifo.InputP99)}, max {Ms(fifo.InputMax)} (PriorityAsync: max {Ms(priority.InputMax)}); a wave loaded in {Ms(fifo.WaveP50)} (PriorityAsync: {Ms(priority.WaveP50)}, spread over frames).");
        }

        if (!(frames && input && background) && !s.Virtual)
        {
            text += Environment.NewLine + "On the machine's clock a busy machine takes the CPU away mid-frame: run on a quiet machine, or with --clock virtual.";
        }

        return (frames && input && background, text);
    }

    private static string YesNo(bool value) => value ? "yes" : "NO";

    private static string SecondsText(TimeSpan value) => Invariant($"{value.TotalSeconds:0.##} s");
}
