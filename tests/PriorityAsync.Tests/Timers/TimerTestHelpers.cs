using System.Diagnostics;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Timers;

/// <summary>Helpers for the timer tests: waiting for a due time to pass, and recording what ran where.</summary>
internal static class TimerTestHelpers
{
    /// <summary>Spins (with sleeps) until <paramref name="span"/> has passed since <paramref name="start"/>: a precondition, never an assertion.</summary>
    public static void WaitUntilPassed(long start, TimeSpan span)
    {
        while (Stopwatch.GetElapsedTime(start) <= span)
        {
            Thread.Sleep(1);
        }
    }

    /// <summary>Waits (bounded) until <paramref name="condition"/> holds; fails loudly otherwise.</summary>
    public static void WaitUntil(Func<bool> condition, string what)
    {
        var deadline = Stopwatch.GetTimestamp();
        while (!condition())
        {
            if (Stopwatch.GetElapsedTime(deadline) > TestTimeout.Unexpected)
            {
                throw new TimeoutException($"Timed out after {TestTimeout.Unexpected.TotalSeconds} s waiting for: {what}.");
            }

            Thread.Sleep(1);
        }
    }

    /// <summary>A thread-safe record of events, in the order they happened.</summary>
    public sealed class Log
    {
        private readonly List<string> _entries = [];

        public void Add(string entry)
        {
            lock (_entries)
            {
                _entries.Add(entry);
            }
        }

        public string[] Entries
        {
            get
            {
                lock (_entries)
                {
                    return [.. _entries];
                }
            }
        }
    }
}
