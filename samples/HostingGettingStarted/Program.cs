// The code quoted in docs/hosting.md: it is compiled, so the docs cannot rot.
// dotnet run --project samples/HostingGettingStarted     (Ctrl+C stops it)
using HostingGettingStarted;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using PriorityAsync.Hosting;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Services.AddPriorityWorker<Worker>();             // was: builder.Services.AddHostedService<Worker>();
builder.Services.AddHealthChecks().AddCheck<PriorityWorkersHealthCheck>("priority-workers", HealthStatus.Unhealthy);

IHost host = builder.Build();
host.Run();
