// A priority lease worker as a .NET hosted worker: dotnet run --project samples/HostedWorker
// Ctrl+C or SIGTERM drains it: the messages in flight are abandoned on the bus (another worker takes them at once), nothing is lost,
// and the process exits 0. At exit it prints the bus's own counts as one JSON line.
using System;
using System.Text.Json;
using HostedWorker;
using MessageBus;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting;
using Samples.Support;

if (SampleCommandLine.Exit("HostedWorker", WorkerSettings.TryParse(args, out WorkerSettings settings, out string? show, out string? error), show, error) is { } exit)
{
    return exit;
}

var bus = new InMemoryMessageBus(settings.Latency);
for (int i = 1; i <= settings.Messages; i++)
{
    bus.Enqueue($"order {i}");
}

HostApplicationBuilder builder = Host.CreateApplicationBuilder();
builder.Services.AddSingleton<IMessageBus>(bus);
builder.Services.AddSingleton(settings);
builder.Services.AddPriorityWorker<PriorityLeaseWorker>("leases", options => options.Levels = 3);

using IHost host = builder.Build();
await host.RunAsync();

Console.WriteLine(JsonSerializer.Serialize(await bus.GetCountsAsync()));
return 0;
