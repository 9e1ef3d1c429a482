using Microsoft.Extensions.Logging;

namespace PriorityAsync.Hosting.Tests.Infrastructure;

/// <summary>One captured log entry, with the structured values of its message.</summary>
public sealed record LogEntry(string Category, LogLevel Level, EventId EventId, string Message, Exception? Exception, IReadOnlyDictionary<string, object?> Values);

/// <summary>Captures every log entry of a host, and lets a test wait for one that matches (bounded by a timeout that fails loudly).</summary>
public sealed class TestLoggerProvider : ILoggerProvider
{
    private readonly object _gate = new();
    private readonly List<LogEntry> _entries = [];
    private readonly List<(Func<LogEntry, bool> Match, TaskCompletionSource<LogEntry> Found)> _waiters = [];

    public IReadOnlyList<LogEntry> Entries
    {
        get
        {
            lock (_gate)
            {
                return [.. _entries];
            }
        }
    }

    public ILogger CreateLogger(string categoryName) => new TestLogger(this, categoryName);

    public Task<LogEntry> WaitForAsync(Func<LogEntry, bool> match, string what)
    {
        var found = new TaskCompletionSource<LogEntry>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            LogEntry? existing = _entries.FirstOrDefault(match);
            if (existing is not null)
            {
                return Task.FromResult(existing);
            }

            _waiters.Add((match, found));
        }

        return found.Task.Within(what);
    }

    public void Dispose()
    {
    }

    private void Add(LogEntry entry)
    {
        lock (_gate)
        {
            _entries.Add(entry);
            for (int i = _waiters.Count - 1; i >= 0; i--)
            {
                if (_waiters[i].Match(entry))
                {
                    _waiters[i].Found.TrySetResult(entry);
                    _waiters.RemoveAt(i);
                }
            }
        }
    }

    private sealed class TestLogger(TestLoggerProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            var values = new Dictionary<string, object?>(StringComparer.Ordinal);
            if (state is IEnumerable<KeyValuePair<string, object?>> pairs)
            {
                foreach (KeyValuePair<string, object?> pair in pairs)
                {
                    values[pair.Key] = pair.Value;
                }
            }

            provider.Add(new LogEntry(category, logLevel, eventId, formatter(state, exception), exception, values));
        }
    }
}
