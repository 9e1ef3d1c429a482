namespace PriorityAsync.Hosting.Tests.Infrastructure;

public static class TaskExtensions
{
    /// <summary>A generous bound on every wait: a test that waits longer has hung, and fails saying on what.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static async Task<T> Within<T>(this Task<T> task, string what)
    {
        try
        {
            return await task.WaitAsync(Timeout);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"Timed out after {Timeout.TotalSeconds} s waiting for: {what}");
        }
    }

    public static async Task Within(this Task task, string what)
    {
        try
        {
            await task.WaitAsync(Timeout);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"Timed out after {Timeout.TotalSeconds} s waiting for: {what}");
        }
    }
}
