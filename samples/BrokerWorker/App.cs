using System;
using System.Collections.Generic;
using System.IO;
using System.Threading.Tasks;
using BrokerWorker.Bus;
using BrokerWorker.Processes;
using BrokerWorker.Report;
using System.Data.Common;
using MessageBus.Postgres;
using MessageBus.Redis;

namespace BrokerWorker;

/// <summary>The entry point's logic, callable in-process by the tests: the exit code, 2 for bad input (one line on error).</summary>
public static class App
{
    public static async Task<int> RunAsync(IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        try
        {
            return await RunCheckedAsync(args, output, error);
        }
        catch (Exception e) when (BusFactory.IsBrokerFailure(e))
        {
            // The broker failed us where no step expected it (the set-up steps report their failures themselves, with what they
            // were doing): one line, exit code 2, never a stack trace. The connection exceptions name the server, never the password.
            string broker = e is PostgresConnectionException or DbException ? "PostgreSQL" : "Redis";
            await error.WriteLineAsync($"BrokerWorker: {(e is PostgresConnectionException or RedisQueueConnectionException ? e.Message : $"{broker} failed: {BusFactory.Reason(e)}")}");
            return 2;
        }
    }

    private static async Task<int> RunCheckedAsync(IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        if (!CommandLine.TryParse(args, out Options options, out string? problem))
        {
            await error.WriteLineAsync($"BrokerWorker: {problem}");
            return 2;
        }

        if (options.Show is { } text)
        {
            await output.WriteAsync(text);
            return 0;
        }

        if (options.WorkerProcess)
        {
            return await WorkerProcess.RunAsync(options, output, error);
        }

        if (options.BusCost)
        {
            return await BusCost.RunAsync(options, output, error);
        }

        if (options.Scaling.Count > 0)
        {
            return await Scaling.RunAsync(options, output, error);
        }

        var coordinator = new Coordinator(options, error);
        IReadOnlyList<RunResult>? results;
        if (options.Bus != "memory")
        {
            // Checked before anything connects: a malformed string never reaches the network.
            string? connection = BusFactory.ConnectionString(options, out problem);
            if (connection is null)
            {
                await error.WriteLineAsync($"BrokerWorker: {problem}");
                return 2;
            }

            results = await coordinator.RunBrokerAsync(connection);
            if (results is null)
            {
                return 2;
            }
        }
        else
        {
            results = await coordinator.RunMemoryAsync();
        }

        Table.Write(output, options, results);
        return 0;
    }
}
