// The code quoted in docs/hosting.md and the hosting package's PACKAGE.md (tools/Snippets copies each region there): it is
// compiled, and tests/Docs.Tests runs the worker in a real host.
// dotnet run --project samples/HostingGettingStarted     (Ctrl+C stops it)
// begin-snippet: hosting-program
// Needs: `dotnet new worker` with the PriorityAsync.Hosting package; samples/HostingGettingStarted/Worker.cs beside it.
using HostingGettingStarted;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using PriorityAsync.Hosting;

HostApplicationBuilder builder = Host.CreateApplicationBuilder(args);
builder.Services.AddPriorityWorker<Worker>();             // was: builder.Services.AddHostedService<Worker>();
builder.Services.AddHealthChecks()                        // package Microsoft.Extensions.Diagnostics.HealthChecks
    .AddCheck<PriorityWorkersHealthCheck>("priority-workers", HealthStatus.Unhealthy);

IHost host = builder.Build();
host.Run();
// end-snippet
