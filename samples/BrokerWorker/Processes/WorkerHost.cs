using System;
using LeaseWorker.Core;
using MessageBus;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using PriorityAsync.Hosting;

namespace BrokerWorker.Processes;

/// <summary>Builds the Generic Host of the workers: one hosted worker per worker, all of one mode, sharing one bus.</summary>
public static class WorkerHost
{
    public static IHost Build(IMessageBus bus, Options options, string modeName, int workers)
    {
        HostApplicationBuilder builder = Host.CreateApplicationBuilder([]);
        builder.Logging.ClearProviders();
        builder.Logging.AddConsole(o => o.LogToStandardErrorThreshold = LogLevel.Trace); // stdout carries the protocol
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.Services.AddSingleton(provider => new WorkerGroup(bus, options, workers, provider.GetRequiredService<IHostApplicationLifetime>()));
        for (int i = 1; i <= workers; i++)
        {
            if (modeName == PriorityThreadsMode.ModeName)
            {
                builder.Services.AddPriorityThreadPoolWorker<PriorityThreadsModeService>($"broker-{i}", o =>
                {
                    o.Levels = PriorityMode.Levels;
                    o.ThreadCount = options.CoreShare; // the worker's share of the cores
                    o.StallTimeout = null; // as in the priority mode: a CPU part holds its thread for its whole length
                });
            }
            else if (modeName == "priority")
            {
                builder.Services.AddPriorityWorker<PriorityModeService>($"broker-{i}", o =>
                {
                    o.Levels = PriorityMode.Levels;
                    o.StallTimeout = null; // a CPU part may hold the loop for longer than a watchdog would like; that is the experiment
                });
            }
            else
            {
                Mode mode = options.CreateMode(modeName);
                builder.Services.AddSingleton<IHostedService>(provider => new ThreadModeService(provider.GetRequiredService<WorkerGroup>(), mode));
            }
        }

        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(10));
        return builder.Build();
    }
}
