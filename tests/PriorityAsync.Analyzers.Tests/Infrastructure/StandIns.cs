namespace PriorityAsync.Analyzers.Tests.Infrastructure;

/// <summary>
/// Stand-in PriorityAsync sources, for the few tests that must not compile against the library this repository builds. Every other
/// test uses the real library (<see cref="TestReferences"/>).
/// </summary>
internal static class StandIns
{
    /// <summary>A PriorityAsync from before the child-task API (no TaskScope, no Priority.Start): the analyzer still reports an unowned
    /// task there, and the code fix, which would have nothing to start the child with, is not offered.</summary>
    public const string LibraryWithoutChildTasks = """
        namespace PriorityAsync
        {
            public static class Priority
            {
                public static Task Prioritize(int level) => Task.CompletedTask;
                public static Task Yield() => Task.CompletedTask;
                public static ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken = default) => default;
            }

            public sealed class PriorityContext
            {
                public static PriorityContext? Current => null;
                public TimeProvider TimeProvider => TimeProvider.System;
                public static void Run(Action entry) { }
                public static void Run(Func<Task> entry) { }
                public Task InvokeAsync(Func<Task> work) => Task.CompletedTask;
            }
        }
        """;
}
