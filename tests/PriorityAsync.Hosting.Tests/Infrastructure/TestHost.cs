using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace PriorityAsync.Hosting.Tests.Infrastructure;

/// <summary>Builds a real Generic Host (Host.CreateApplicationBuilder) with one scripted priority worker and captured logs.</summary>
public static class TestHost
{
    public static IHost Build(
        TestLoggerProvider logs,
        Func<ScriptedWorker, CancellationToken, Task> script,
        Dictionary<string, string?>? configuration = null,
        Action<PriorityWorkerOptions>? configure = null,
        Action<HostApplicationBuilder>? more = null)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(configuration ?? []);
        builder.Logging.ClearProviders();
        builder.Logging.SetMinimumLevel(LogLevel.Debug);
        builder.Logging.AddProvider(logs);
        builder.Services.AddSingleton(new WorkerScript(script));
        builder.Services.AddPriorityWorker<ScriptedWorker>(configure);
        builder.Services.AddHealthChecks().AddCheck<PriorityWorkersHealthCheck>("priority-workers");
        more?.Invoke(builder);
        return builder.Build();
    }

    public static ScriptedWorker Worker(this IHost host) => host.Services.GetServices<IHostedService>().OfType<ScriptedWorker>().Single();
}
