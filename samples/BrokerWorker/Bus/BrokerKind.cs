using System;

namespace BrokerWorker.Bus;

/// <summary>
/// A real broker the sample can run on: what <c>--bus</c> calls it, where its connection string comes from, how to check that
/// string without connecting, which exceptions are that broker failing, and how to open one of its queues. Every kind is listed
/// once, in <see cref="BusFactory.Kinds"/>; the command line, the errors and the coordinator read them from there.
/// </summary>
/// <param name="Bus">The value of <c>--bus</c>.</param>
/// <param name="Name">The broker's name for people.</param>
/// <param name="Variable">The environment variable with the connection string when <c>--connection</c> is not given.</param>
/// <param name="Validate">Checks a connection string without connecting; throws <see cref="ArgumentException"/> with one line
/// that never repeats the string (it may hold a password).</param>
/// <param name="IsFailure">Whether an exception is this broker failing (a refused statement or script, a lost connection): the
/// worker backs off and goes on, the coordinator prints one line.</param>
/// <param name="Create">Opens a queue object: the connection string, the run's settings, the queue's name, and a role that names
/// its connections and its leases' owner.</param>
public sealed record BrokerKind(
    string Bus,
    string Name,
    string Variable,
    Action<string> Validate,
    Func<Exception, bool> IsFailure,
    Func<string, Options, string, string, Broker> Create);
