using System;
using System.Collections.Generic;
using System.Globalization;

namespace BrokerWorker;

/// <summary>Parses the command line into <see cref="Options"/>; every problem is one line for the user.</summary>
public static class CommandLine
{
    public const string Usage =
        """
        BrokerWorker: the lease worker against a broker, several worker processes, four modes side by side.

          --bus memory|postgres    the broker (memory: in this process, the default; postgres: a real PostgreSQL)
          --connection STRING      Npgsql connection string (default: the PRIORITYASYNC_POSTGRES environment variable)
          --mode M[,M]|all         priority, single, threadpool, heartbeat-thread (default: all, one after another)
          --workers N              worker processes against one queue (memory: N workers in this process), default 1
          --messages M             messages the producer puts on the queue first, default 12
          --rate R                 produce at R messages/s while the workers run, instead of all first
          --steps S                steps per message (CPU then I/O), default 10
          --concurrency C          messages in flight per worker, default 4
          --cpu D --io D           one step's CPU and I/O parts in the seed's time, default 1s and 1s
          --cpu-factor F           multiply the CPU part (the issue's 2x-4x runs), default 1
          --checkpoint D|off       cut CPU parts into slices of D with a checkpoint between them, default off
          --renew-every D          renewal interval, default 2s;  --lease D  lease length, default 5s
          --progress-timeout D     priority: stop renewing a message whose I/O call has not answered for D, default 2 leases
          --time-scale X           run every seed duration times X, default 0.1
          --hang-message K         message K's first delivery never finishes processing
          --latency D              the in-memory bus's reply time in the seed's time, default 250ms
          --connect-timeout D      PostgreSQL connect timeout (real time), default 5s
          --stall-after D          end a run with no completion for D (real time), default 8 leases as they run
          --deadline D             end a run not done by D (real time), default 3 CPU bounds + the stall time
          --pool-threads N         threadpool mode: the pool's minimum threads (default: what an uncompressed run gets)
          --queue NAME             the queue table's name prefix, default broker_worker
          --bus-cost [--duration D] receive+renew+complete per second with no work: the sample's bus against plain Npgsql
          --json                   one JSON line per run instead of the table
        """;

    public static bool TryParse(IReadOnlyList<string> args, out Options options, out string? error)
    {
        options = new Options();
        error = null;
        try
        {
            options = Parse(args);
            error = options.Validate();
        }
        catch (FormatException e)
        {
            error = e.Message;
        }

        return error is null;
    }

    private static Options Parse(IReadOnlyList<string> args)
    {
        var o = new Options();
        for (int i = 0; i < args.Count; i++)
        {
            string name = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new FormatException($"{name} needs a value.");
            o = name switch
            {
                "--bus" => o with { Bus = Value() },
                "--connection" => o with { Connection = Value() },
                "--mode" => o with { Modes = ParseModes(Value()) },
                "--workers" => o with { Workers = Int(name, Value()) },
                "--messages" => o with { Messages = Int(name, Value()) },
                "--rate" => o with { Rate = Double(name, Value()) },
                "--steps" => o with { Steps = Int(name, Value()) },
                "--concurrency" => o with { Concurrency = Int(name, Value()) },
                "--cpu" => o with { Cpu = Duration(name, Value()) },
                "--io" => o with { Io = Duration(name, Value()) },
                "--cpu-factor" => o with { CpuFactor = Double(name, Value()) },
                "--checkpoint" => o with { Checkpoint = Value() is "off" ? null : Duration(name, args[i]) },
                "--renew-every" => o with { RenewEvery = Duration(name, Value()) },
                "--lease" => o with { Lease = Duration(name, Value()) },
                "--progress-timeout" => o with { ProgressTimeout = Duration(name, Value()) },
                "--time-scale" => o with { TimeScale = Double(name, Value()) },
                "--hang-message" => o with { HangMessage = Int(name, Value()) },
                "--latency" => o with { MemoryLatency = Duration(name, Value()) },
                "--connect-timeout" => o with { ConnectTimeout = Duration(name, Value()) },
                "--stall-after" => o with { StallAfter = Duration(name, Value()) },
                "--deadline" => o with { Deadline = Duration(name, Value()) },
                "--pool-threads" => o with { PoolThreads = Int(name, Value()) },
                "--queue" => o with { Queue = Value() },
                "--bus-cost" => o with { BusCost = true },
                "--duration" => o with { BusCostDuration = Duration(name, Value()) },
                "--json" => o with { Json = true },
                "--worker-process" => o with { WorkerProcess = true },
                "--spins-per-ms" => o with { SpinsPerMs = Double(name, Value()) },
                _ => throw new FormatException($"Unknown option '{name}'. Run with --help for the options."),
            };
        }

        return o;
    }

    private static string[] ParseModes(string value) =>
        value == "all" ? Options.AllModes : value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static int Int(string name, string value) =>
        int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out int result)
            ? result
            : throw new FormatException($"{name} must be a whole number (got '{value}').");

    private static double Double(string name, string value) =>
        double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double result)
            ? result
            : throw new FormatException($"{name} must be a number (got '{value}').");

    /// <summary>A duration: <c>250ms</c>, <c>2s</c>, <c>1.5s</c>.</summary>
    public static TimeSpan Duration(string name, string value)
    {
        (string number, double unit) = value.EndsWith("ms", StringComparison.Ordinal) ? (value[..^2], 1.0)
            : value.EndsWith('s') ? (value[..^1], 1000.0)
            : (string.Empty, 0);
        if (unit == 0 || !double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out double amount) || double.IsNaN(amount) || double.IsInfinity(amount) || Math.Abs(amount * unit) > TimeSpan.FromDays(1).TotalMilliseconds)
        {
            throw new FormatException($"{name} must be a duration such as 250ms or 2s (got '{value}').");
        }

        return TimeSpan.FromMilliseconds(amount * unit);
    }
}
