using Microsoft.Extensions.Logging;

namespace Docs.Tests;

/// <summary>Captures every formatted log message; a test waits for the ones it expects (bounded by the caller's timeout).</summary>
internal sealed class CapturingLoggerProvider : ILoggerProvider, ILogger
{
    private readonly Lock _gate = new();
    private readonly List<string> _messages = [];
    private readonly List<(Func<string, bool> Match, int Count, TaskCompletionSource<IReadOnlyList<string>> Found)> _waiters = [];

    public ILogger CreateLogger(string categoryName) => this;

    /// <summary>Completes with the first <paramref name="count"/> messages that match, once they have been logged.</summary>
    public Task<IReadOnlyList<string>> WaitForAsync(Func<string, bool> match, int count = 1)
    {
        var found = new TaskCompletionSource<IReadOnlyList<string>>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            _waiters.Add((match, count, found));
            Notify();
        }

        return found.Task;
    }

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        lock (_gate)
        {
            _messages.Add(formatter(state, exception));
            Notify();
        }
    }

    public bool IsEnabled(LogLevel logLevel) => true;

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public void Dispose()
    {
    }

    // Called under _gate: completes every waiter whose count of matching messages is reached.
    private void Notify()
    {
        for (int i = _waiters.Count - 1; i >= 0; i--)
        {
            List<string> matching = _messages.Where(_waiters[i].Match).Take(_waiters[i].Count).ToList();
            if (matching.Count == _waiters[i].Count)
            {
                _waiters[i].Found.TrySetResult(matching);
                _waiters.RemoveAt(i);
            }
        }
    }
}
