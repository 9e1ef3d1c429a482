using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0003: tasks started on the loop that nothing owns.</summary>
public sealed class UnownedTaskTests
{
    [Fact]
    public Task DiscardedAndUnawaited_OnTheLoop_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;
            Task<int> CountAsync() => Task.FromResult(1);
            ValueTask FlushAsync() => default;

            void M(C? other) => PriorityContext.Run(async () =>
            {
                {|PA0003:_ = KeepLeaseAsync(1);|}
                {|PA0003:_ = CountAsync();|}
                {|PA0003:FlushAsync();|}
                {|PA0003:other?.KeepLeaseAsync(2);|}
                {|PA0003:_ = Task.Run(() => { });|}
                await Task.Yield();
            });
        }
        """);

    [Fact]
    public Task OwnedOrOffTheLoop_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;

            void M() => PriorityContext.Run(async () =>
            {
                await KeepLeaseAsync(1);
                Task keeper = KeepLeaseAsync(2);
                await keeper;
                _ = PriorityContext.Current!.InvokeAsync(() => KeepLeaseAsync(3)); // the loop owns InvokeAsync's task
                var tasks = new List<Task> { KeepLeaseAsync(4) };
                await Task.WhenAll(tasks);
            });

            void OffTheLoop()
            {
                _ = KeepLeaseAsync(5);
                KeepLeaseAsync(6);
            }
        }
        """);

    [Fact]
    public Task StartedAsChildren_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id, CancellationToken token) => Task.CompletedTask;
            Task<int> CountAsync(CancellationToken token) => Task.FromResult(1);

            void M() => PriorityContext.Run(async () =>
            {
                Priority.Start(token => KeepLeaseAsync(1, token));
                Priority.Start(token => KeepLeaseAsync(2, token), 1);
                PriorityContext.Current!.Scope.Start(token => KeepLeaseAsync(3, token));
                await TaskScope.RunAsync(async scope =>
                {
                    scope.Start(token => KeepLeaseAsync(4, token));
                    scope.Start(token => KeepLeaseAsync(5, token), 0);
                    // StartAsync hands back the child's task, but the scope owns the child whether or not that task is awaited.
                    _ = scope.StartAsync(token => KeepLeaseAsync(6, token));
                    _ = scope.StartAsync(token => CountAsync(token), 2);
                    Task<int> count = scope.StartAsync(CountAsync);
                    {|PA0003:_ = KeepLeaseAsync(7, scope.CancellationToken);|}
                    await count;
                });
            });
        }
        """);

    [Fact]
    public Task ChildrenStartedFromAScopeOrPriorityStart_RunOnTheLoop() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;

            // A child runs on the loop whoever starts it: an unowned task in it is reported as on the loop.
            Task M(TaskScope scope)
            {
                scope.Start(token =>
                {
                    {|PA0003:_ = KeepLeaseAsync(1);|}
                    return Task.CompletedTask;
                });
                return Task.CompletedTask;
            }

            // TaskScope.RunAsync only works on the loop: its body, and the method that calls it, run there.
            async Task N()
            {
                {|PA0003:_ = KeepLeaseAsync(2);|}
                await TaskScope.RunAsync(scope =>
                {
                    {|PA0003:KeepLeaseAsync(3);|}
                    return Task.CompletedTask;
                });
            }
        }
        """);

    [Fact]
    public Task DiscardedScope_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            // The scope's task carries its children's failures: discarding it loses them.
            void M() => PriorityContext.Run(() => { {|PA0003:_ = TaskScope.RunAsync(scope => Task.CompletedTask);|} });
        }
        """);

    [Fact]
    public Task InNestedScopes_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;

            // A scope in a scope, a child in a child, a block in a scope: each runs on the loop, and so does its unowned task.
            void M() => PriorityContext.Run(async () =>
            {
                await TaskScope.RunAsync(async outer =>
                {
                    await TaskScope.RunAsync(async inner =>
                    {
                        {|PA0003:_ = KeepLeaseAsync(1);|}
                        inner.Start(async stop =>
                        {
                            {|PA0003:KeepLeaseAsync(2);|}
                            await Priority.Delay(TimeSpan.FromSeconds(1), stop);
                        });
                        await Task.Yield();
                    });
                    using (var cts = new CancellationTokenSource())
                    {
                        if (cts.IsCancellationRequested)
                        {
                            {|PA0003:_ = KeepLeaseAsync(3);|}
                        }
                    }

                    await Task.Yield();
                });
            });
        }
        """);

    [Fact]
    public Task InALocalFunctionCalledOnlyFromTheLoop_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;

            // The local functions touch no PriorityAsync member: they run on the loop because every use of them is there.
            void M()
            {
                PriorityContext.Run(async () =>
                {
                    await HandleAsync(1);
                    await TaskScope.RunAsync(async scope =>
                    {
                        scope.Start(KeepAsync);
                        await HandleAsync(2);
                    });
                });

                async Task HandleAsync(int id)
                {
                    {|PA0003:_ = KeepLeaseAsync(id);|}
                    await Nested();

                    async Task Nested()
                    {
                        {|PA0003:KeepLeaseAsync(id + 1);|}
                        await Task.Yield();
                    }
                }

                async Task KeepAsync(CancellationToken stop)
                {
                    {|PA0003:_ = KeepLeaseAsync(3);|}
                    await Task.Yield();
                }
            }
        }
        """);

    [Fact]
    public Task InALocalFunctionAlsoUsedOffTheLoop_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task KeepLeaseAsync(int id) => Task.CompletedTask;

            async Task M()
            {
                PriorityContext.Run(() => CalledOnAndOff(1));
                await CalledOnAndOff(2);                  // here, off the loop: not every use is on a loop
                await Task.Run(() => PassedToThePool(3));
                PriorityContext.Run(() => Recursive(3));
                await Unused(4);

                Task CalledOnAndOff(int id)
                {
                    _ = KeepLeaseAsync(id);
                    return Task.CompletedTask;
                }

                Task PassedToThePool(int id)
                {
                    _ = KeepLeaseAsync(id);
                    return Task.CompletedTask;
                }

                // Only called from the loop and from itself: on the loop.
                async Task Recursive(int depth)
                {
                    {|PA0003:_ = KeepLeaseAsync(depth);|}
                    if (depth > 0)
                    {
                        await Recursive(depth - 1);
                    }
                }

                Task Unused(int id)
                {
                    _ = KeepLeaseAsync(id);
                    return Task.CompletedTask;
                }
            }
        }
        """);

    [Fact]
    public Task InATopLevelProgramsLocalFunction_CalledInsideRun_Reported() => Verifier.AnalyzeProgramAsync("""
        PriorityContext.Run(async () =>
        {
            for (int i = 0; i < 3; i++)
            {
                Priority.Start(_ => HandleAsync(i), level: 2);
            }

            await Task.Yield();
        });

        Console.WriteLine("done");

        async Task HandleAsync(int message)
        {
            {|PA0003:_ = RenewAsync(message);|}
            await {|PA0001:Task.Delay(100)|};
        }

        Task RenewAsync(int message) => Task.CompletedTask;
        """);
}
