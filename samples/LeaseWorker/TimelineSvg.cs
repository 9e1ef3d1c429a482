using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Xml;
using LeaseWorker.Core;

namespace LeaseWorker;

/// <summary>
/// Draws timelines as one SVG, side by side (one panel per mode, on the same time scale): one lane per message, coloured by
/// activity (the level in the priority mode), lost leases marked with a red cross. The picture of the seed article, for this sample.
/// </summary>
public static class TimelineSvg
{
    private const double LaneHeight = 18;
    private const double LaneGap = 4;
    private const double PanelWidth = 560;
    private const double PanelGap = 50;
    private const double Left = 40;
    private const double Top = 72;
    private const double AxisHeight = 30;
    private const double LegendHeight = 44;

    public static void Write(string path, IReadOnlyList<Timeline> timelines, string caption)
    {
        using var file = File.Create(path);
        Write(file, timelines, caption);
    }

    public static void Write(Stream destination, IReadOnlyList<Timeline> timelines, string caption)
    {
        ArgumentNullException.ThrowIfNull(timelines);
        int lanes = Math.Max(1, timelines.SelectMany(t => t.Spans).Select(s => s.Message).DefaultIfEmpty(0).Max());
        double seconds = Math.Max(0.001, timelines.Select(t => t.End.TotalSeconds).DefaultIfEmpty(0).Max());
        double lanesHeight = lanes * (LaneHeight + LaneGap);
        double width = Left + (timelines.Count * (PanelWidth + PanelGap));
        double height = Top + lanesHeight + AxisHeight + LegendHeight;

        using var svg = XmlWriter.Create(destination, new XmlWriterSettings { Indent = true, Encoding = new System.Text.UTF8Encoding(encoderShouldEmitUTF8Identifier: false) });
        svg.WriteStartElement("svg", "http://www.w3.org/2000/svg");
        svg.WriteAttributeString("width", Number(width));
        svg.WriteAttributeString("height", Number(height));
        svg.WriteAttributeString("viewBox", $"0 0 {Number(width)} {Number(height)}");
        svg.WriteAttributeString("font-family", "sans-serif");
        svg.WriteAttributeString("font-size", "11");
        Rect(svg, 0, 0, width, height, "white");
        Text(svg, Left, 18, "Lease worker: one lane per message, one panel per mode, same time scale", "start", "13", "bold");
        Text(svg, Left, 36, caption, "start", "11", null);

        for (int panel = 0; panel < timelines.Count; panel++)
        {
            Timeline timeline = timelines[panel];
            double x0 = Left + (panel * (PanelWidth + PanelGap));
            double scale = PanelWidth / seconds;
            int lost = timeline.Lost.Select(l => l.Message).Distinct().Count();
            Text(svg, x0, Top - 12, $"{timeline.Mode}: {lost} of {lanes} leases lost", "start", "12", "bold");

            for (int lane = 1; lane <= lanes; lane++)
            {
                double y = Top + ((lane - 1) * (LaneHeight + LaneGap));
                Rect(svg, x0, y, PanelWidth, LaneHeight, "#f4f4f4");
                if (panel == 0)
                {
                    Text(svg, x0 - 6, y + 13, $"#{lane}", "end", "10", null);
                }
            }

            // Waiting first, so that running spans draw over it.
            foreach (Timeline.Span span in timeline.Spans.OrderBy(s => s.Kind == SpanKind.Waiting ? 0 : 1))
            {
                double y = Top + ((span.Message - 1) * (LaneHeight + LaneGap));
                double x = x0 + (span.Start.TotalSeconds * scale);
                double w = Math.Max(0.8, (span.End - span.Start).TotalSeconds * scale);
                (double inset, string fill, double opacity) = Style(span);
                Rect(svg, x, y + inset, w, LaneHeight - (2 * inset), fill, opacity, string.Create(CultureInfo.InvariantCulture,
                    $"message {span.Message}: {span.Kind} ({span.Activity}) {span.Start.TotalMilliseconds:0} to {span.End.TotalMilliseconds:0} ms"));
            }

            foreach ((int message, TimeSpan at) in timeline.Lost)
            {
                Cross(svg, x0 + (at.TotalSeconds * scale), Top + ((message - 1) * (LaneHeight + LaneGap)) + (LaneHeight / 2));
            }

            // Time axis: ticks at round seconds (as measured, after --time-scale).
            double axisY = Top + lanesHeight + 4;
            Line(svg, x0, axisY, x0 + PanelWidth, axisY);
            double step = NiceStep(seconds);
            for (double t = 0; t <= seconds + 1e-9; t += step)
            {
                double x = x0 + (t * scale);
                Line(svg, x, axisY, x, axisY + 4);
                Text(svg, x, axisY + 15, string.Create(CultureInfo.InvariantCulture, $"{t:0.##} s"), "middle", "10", null);
            }
        }

        // Legend.
        double legendY = Top + lanesHeight + AxisHeight + 10;
        double lx = Left;
        foreach ((string label, string fill, double opacity, double inset) in Legend())
        {
            Rect(svg, lx, legendY + inset, 18, 12 - (2 * inset), fill, opacity);
            Text(svg, lx + 22, legendY + 10, label, "start", "10", null);
            lx += 30 + (label.Length * 5.6);
        }

        Cross(svg, lx + 5, legendY + 6);
        Text(svg, lx + 16, legendY + 10, "lease lost", "start", "10", null);
        svg.WriteEndElement();
    }

    // Colours by activity, as the priority mode's levels: lease 2 (orange), processing 1 (blue), receiving 0 (grey). Full height:
    // running on the worker's thread; I/O and round trips half height; waiting for the thread a thin pale bar.
    private static (double Inset, string Fill, double Opacity) Style(Timeline.Span span)
    {
        string fill = Colour(span.Activity);
        return span.Kind switch
        {
            SpanKind.Cpu => (0, fill, 1),
            SpanKind.Waiting => (6, fill, 0.45),
            _ => (4, fill, 0.75),
        };
    }

    private static string Colour(Activity activity) => activity switch
    {
        Activity.Lease => "#e07000",
        Activity.Processing => "#1f5fbf",
        _ => "#808080",
    };

    private static IEnumerable<(string Label, string Fill, double Opacity, double Inset)> Legend() =>
    [
        ("CPU (processing, level 1)", Colour(Activity.Processing), 1, 0),
        ("I/O and ack (level 1)", Colour(Activity.Processing), 0.75, 2.5),
        ("lease refresh (level 2)", Colour(Activity.Lease), 0.75, 2.5),
        ("receive (level 0)", Colour(Activity.Receiving), 0.75, 2.5),
        ("ready, waiting for the thread (pale)", Colour(Activity.Lease), 0.45, 3.5),
    ];

    private static double NiceStep(double seconds)
    {
        double raw = seconds / 8;
        double magnitude = Math.Pow(10, Math.Floor(Math.Log10(raw)));
        double[] nice = [1, 2, 5, 10];
        return nice.Select(n => n * magnitude).First(s => s >= raw);
    }

    private static void Rect(XmlWriter svg, double x, double y, double w, double h, string fill, double opacity = 1, string? title = null)
    {
        svg.WriteStartElement("rect");
        Attributes(svg, ("x", Number(x)), ("y", Number(y)), ("width", Number(w)), ("height", Number(h)), ("fill", fill), ("fill-opacity", Number(opacity)));
        if (title is not null)
        {
            svg.WriteElementString("title", "http://www.w3.org/2000/svg", title);
        }

        svg.WriteEndElement();
    }

    // A lease lost: a red cross centred on (x, y).
    private static void Cross(XmlWriter svg, double x, double y)
    {
        svg.WriteStartElement("path");
        Attributes(svg, ("d", $"M{Number(x - 5)},{Number(y - 5)} L{Number(x + 5)},{Number(y + 5)} M{Number(x - 5)},{Number(y + 5)} L{Number(x + 5)},{Number(y - 5)}"), ("stroke", "#d00000"), ("stroke-width", "2.5"));
        svg.WriteEndElement();
    }

    private static void Line(XmlWriter svg, double x1, double y1, double x2, double y2)
    {
        svg.WriteStartElement("line");
        Attributes(svg, ("x1", Number(x1)), ("y1", Number(y1)), ("x2", Number(x2)), ("y2", Number(y2)), ("stroke", "#444"));
        svg.WriteEndElement();
    }

    private static void Text(XmlWriter svg, double x, double y, string text, string anchor, string size, string? weight)
    {
        svg.WriteStartElement("text");
        Attributes(svg, ("x", Number(x)), ("y", Number(y)), ("text-anchor", anchor), ("font-size", size));
        if (weight is not null)
        {
            svg.WriteAttributeString("font-weight", weight);
        }

        svg.WriteString(text);
        svg.WriteEndElement();
    }

    private static void Attributes(XmlWriter svg, params (string Name, string Value)[] attributes)
    {
        foreach ((string name, string value) in attributes)
        {
            svg.WriteAttributeString(name, value);
        }
    }

    private static string Number(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);
}
