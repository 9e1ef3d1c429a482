using System.IO;
using System.Reflection;
using System.Runtime.ExceptionServices;

namespace Docs.Tests;

/// <summary>
/// Runs code on a fresh thread (xunit installs its own SynchronizationContext on its threads, and a sample's top-level program
/// expects none), with bounded waits that fail loudly: no test may hang, and none asserts on timing.
/// </summary>
internal static class OwnThread
{
    /// <summary>Long enough never to fire on a loaded 2-core CI machine; only a deadlock or a lost item reaches it.</summary>
    public static readonly TimeSpan Unexpected = TimeSpan.FromSeconds(60);

    private static readonly Lock s_console = new();

    public static T Run<T>(Func<T> body, string what)
    {
        T result = default!;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                result = body();
            }
            catch (Exception e)
            {
                failure = e;
            }
        })
        { IsBackground = true, Name = what };
        thread.Start();
        if (!thread.Join(Unexpected))
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what}.");
        }

        if (failure is not null)
        {
            ExceptionDispatchInfo.Capture(failure).Throw();
        }

        return result;
    }

    /// <summary>Runs a sample's entry point (its top-level statements) on its own thread with the console captured; one at a time.</summary>
    public static (int ExitCode, string Output) RunEntryPoint(Assembly sample, params string[] args)
    {
        lock (s_console)
        {
            TextWriter previous = Console.Out;
            var output = new StringWriter();
            Console.SetOut(output);
            try
            {
                object? exit = Run(() => sample.EntryPoint!.Invoke(null, sample.EntryPoint.GetParameters().Length == 0 ? null : [args]), $"{sample.GetName().Name}'s entry point");
                exit = exit is Task task ? AwaitEntry(task) : exit;
                return (exit as int? ?? 0, output.ToString().ReplaceLineEndings("\n"));
            }
            finally
            {
                Console.SetOut(previous);
            }
        }
    }

    public static async Task<T> Within<T>(this Task<T> task, string what)
    {
        await ((Task)task).Within(what);
        return await task;
    }

    public static async Task Within(this Task task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(Unexpected)) != task)
        {
            throw new TimeoutException($"Timed out after {Unexpected.TotalSeconds} s waiting for: {what}.");
        }

        await task;
    }

    private static object? AwaitEntry(Task task)
    {
        if (!task.Wait(Unexpected))
        {
            throw new TimeoutException("Timed out waiting for an async entry point.");
        }

        return task.GetType().GetProperty("Result")?.GetValue(task);
    }
}
