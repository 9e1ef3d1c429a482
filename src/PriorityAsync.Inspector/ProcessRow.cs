namespace PriorityAsync.Inspector;

/// <summary>A .NET process that publishes a diagnostics port.</summary>
/// <param name="LoadsPriorityAsync">Whether it has PriorityAsync.dll loaded (read from the process's memory map on Linux); null
/// where that cannot be told.</param>
internal sealed record ProcessRow(int Id, string Name, string CommandLine, bool? LoadsPriorityAsync);
