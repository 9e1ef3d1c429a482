using System;
using System.Threading;

namespace PriorityAsync.Inspector;

/// <summary>
/// The user's request to detach, in every mode: the q key (or Escape) when standard input is a terminal, else a line "q" on it (a
/// script, a test, <c>kubectl exec</c> without a TTY). The end of standard input is not a request: a tool started with its input
/// closed runs until Ctrl+C, --duration or the target's end.
/// </summary>
internal sealed class QuitSignal
{
    private readonly bool _keys;
    private int _requested;

    private QuitSignal(bool keys) => _keys = keys;

    /// <summary>Whether q was pressed or read. Polls the keyboard when standard input is a terminal.</summary>
    public bool Requested
    {
        get
        {
            if (_keys)
            {
                while (Console.KeyAvailable)
                {
                    if (Console.ReadKey(intercept: true).Key is ConsoleKey.Q or ConsoleKey.Escape)
                    {
                        Volatile.Write(ref _requested, 1);
                    }
                }
            }

            return Volatile.Read(ref _requested) != 0;
        }
    }

    /// <summary>Starts listening: with keys, nothing runs until <see cref="Requested"/> is read; with lines, a background thread reads
    /// standard input (it blocks in the read, so it is left to end with the process).</summary>
    public static QuitSignal Start(bool keys)
    {
        var signal = new QuitSignal(keys);
        if (!keys)
        {
            var reader = new Thread(() =>
            {
                while (Console.In.ReadLine() is { } text)
                {
                    if (text.Trim() is "q" or "Q")
                    {
                        Volatile.Write(ref signal._requested, 1);
                        return;
                    }
                }
            })
            { IsBackground = true, Name = "prio stdin" };
            reader.Start();
        }

        return signal;
    }
}
