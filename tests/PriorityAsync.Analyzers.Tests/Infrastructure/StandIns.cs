namespace PriorityAsync.Analyzers.Tests.Infrastructure;

/// <summary>
/// Test-only stand-ins for the child-task API (issue 18: TaskScope, Priority.Start) until it is on main: the shape the lead gave,
/// with the PriorityAsync members the sources use. Sources compiled against these get no real library reference.
/// </summary>
internal static class StandIns
{
    public const string Library = """
        namespace PriorityAsync
        {
            public static class Priority
            {
                public static Task Prioritize(int level) => Task.CompletedTask;
                public static Task Yield() => Task.CompletedTask;
                public static ValueTask Delay(TimeSpan delay, CancellationToken cancellationToken = default) => default;
                public static Task Start(Func<CancellationToken, Task> child) => Task.CompletedTask;
                public static Task Start(Func<CancellationToken, Task> child, int level) => Task.CompletedTask;
            }

            public sealed class PriorityContext
            {
                public static PriorityContext? Current => null;
                public TimeProvider TimeProvider => TimeProvider.System;
                public static void Run(Func<Task> entry) { }
                public Task InvokeAsync(Func<Task> work) => Task.CompletedTask;
            }

            public sealed class TaskScope
            {
                public static Task RunAsync(Func<TaskScope, Task> body, CancellationToken cancellationToken = default) => Task.CompletedTask;
                public CancellationToken CancellationToken => default;
                public Task Start(Func<CancellationToken, Task> child) => Task.CompletedTask;
                public Task Start(Func<CancellationToken, Task> child, int level) => Task.CompletedTask;
                public void Cancel() { }
            }
        }
        """;
}
