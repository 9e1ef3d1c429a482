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

            void M() => PriorityContext.Run(async () =>
            {
                _ = Priority.Start(token => KeepLeaseAsync(1, token));
                Priority.Start(token => KeepLeaseAsync(2, token), 1);
                await TaskScope.RunAsync(async scope =>
                {
                    scope.Start(token => KeepLeaseAsync(3, token));
                    _ = scope.Start(token => KeepLeaseAsync(4, token), 0);
                    {|PA0003:_ = KeepLeaseAsync(5, scope.CancellationToken);|}
                    await Task.Yield();
                });
            });
        }
        """, StandIns.Library);
}
