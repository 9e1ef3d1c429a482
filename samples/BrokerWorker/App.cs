using System;
using System.Collections.Generic;
using System.IO;
using System.Text.Json;
using System.Threading.Tasks;
using BrokerWorker.Bus;
using BrokerWorker.Processes;
using BrokerWorker.Report;
using MessageBus;

namespace BrokerWorker;

/// <summary>The entry point's logic, callable in-process by the tests: the exit code, 2 for bad input (one line on error).</summary>
public static class App
{
    /// <summary>Runs the command line <paramref name="args"/>, or a worker process's settings when <see cref="WorkerProcess.Variable"/> is set.</summary>
    public static async Task<int> RunAsync(IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        if (Environment.GetEnvironmentVariable(WorkerProcess.Variable) is { Length: > 0 } worker)
        {
            return await RunAsync(JsonSerializer.Deserialize<Options>(worker)!, output, error, isWorker: true);
        }

        if (!CommandLine.TryParse(args, out Options options, out string? problem))
        {
            await error.WriteLineAsync($"BrokerWorker: {problem}");
            return 2;
        }

        return await RunAsync(options, output, error);
    }

    /// <summary>Runs <paramref name="options"/> as parsed (the tests set what the command line does not carry).</summary>
    public static async Task<int> RunAsync(Options options, TextWriter output, TextWriter error, bool isWorker = false)
    {
        try
        {
            return await RunCheckedAsync(options, output, error, isWorker);
        }
        catch (Exception e) when (BusFactory.IsBrokerFailure(e))
        {
            // The broker failed us where no step expected it (the set-up steps report their failures themselves, with what they
            // were doing): one line, exit code 2, never a stack trace. The connection exceptions name the server, never the password.
            await error.WriteLineAsync($"BrokerWorker: {(e is QueueConnectionException ? e.Message : $"{options.BusName} failed: {BusFactory.Reason(e)}")}");
            return 2;
        }
    }

    private static async Task<int> RunCheckedAsync(Options options, TextWriter output, TextWriter error, bool isWorker)
    {
        if (options.Show is { } text)
        {
            await output.WriteAsync(text);
            return 0;
        }

        string? connection = null;
        if (BusFactory.Kind(options.Bus) is not null)
        {
            // Checked before anything connects: a malformed string never reaches the network.
            connection = BusFactory.ConnectionString(options, out string? problem);
            if (connection is null)
            {
                await error.WriteLineAsync($"BrokerWorker: {problem}");
                return 2;
            }
        }

        if (isWorker)
        {
            string workerConnection = connection ?? throw new InvalidOperationException("A worker process runs on a real broker.");
            return await WorkerProcess.RunAsync(options, workerConnection, output, error);
        }

        if (options.BusCost)
        {
            return await BusCost.RunAsync(options, connection, output, error);
        }

        var coordinator = new Coordinator(options, error);
        IReadOnlyList<RunResult>? results = connection is null ? await coordinator.RunMemoryAsync() : await coordinator.RunBrokerAsync(connection);
        if (results is null)
        {
            return 2;
        }

        Table.Write(output, options, results);
        return 0;
    }
}
