using PriorityAsync.Analyzers.Tests.Infrastructure;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>PA0002: synchronous waits on the loop, and the waits that do not block (or do not block a loop).</summary>
public sealed class BlockingWaitTests
{
    [Fact]
    public Task Waits_OnTheLoop_Reported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task<int> Fetch() => Task.FromResult(1);
            ValueTask<int> FetchValue() => new(1);

            void M(Task work) => PriorityContext.Run(() =>
            {
                {|PA0002:work.Wait()|};
                {|PA0002:work.Wait(TimeSpan.FromSeconds(1))|};
                int a = {|PA0002:Fetch().Result|};
                int b = {|PA0002:FetchValue().Result|};
                {|PA0002:work.GetAwaiter().GetResult()|};
                int c = {|PA0002:Fetch().ConfigureAwait(false).GetAwaiter().GetResult()|};
                {|PA0002:Task.WaitAll(work)|};
                {|PA0002:Task.WaitAny(work)|};
                {|PA0002:Thread.Sleep(10)|};
                {|PA0002:Thread.Sleep(TimeSpan.FromMilliseconds(10))|};
            });
        }
        """);

    [Fact]
    public Task Waits_OnCompletedTasks_NotReported() => Verifier.AnalyzeAsync("""
        class C
        {
            Task<int> Fetch() => Task.FromResult(1);

            void M(Task work) => PriorityContext.Run(async () =>
            {
                Task<int> first = Fetch();
                Task<int> second = Fetch();
                await Task.WhenAll(first, second);
                int sum = first.Result + second.GetAwaiter().GetResult();

                Task<int>[] all = { Fetch(), Fetch() };
                await Task.WhenAll(all);
                foreach (Task<int> done in all)
                {
                    sum += done.Result;
                }

                sum += all[0].Result;

                Task<int> third = Fetch();
                if (third.IsCompletedSuccessfully)
                {
                    sum += third.Result;
                }

                work.Wait(0);
                work.Wait(TimeSpan.Zero);
                Thread.Sleep(0);

                Task<int> fourth = Fetch();
                sum += {|PA0002:fourth.Result|}; // nothing completed it before
                await fourth;
            });
        }
        """);

    [Fact]
    public Task Waits_FromTheThreadThatDrivesTheLoop_NotReported() => Verifier.AnalyzeAsync("""
        class Tests
        {
            public void InvokeAsync_FromOutside_Completes()
            {
                using var thread = new PriorityContextThread();
                Task<int> answer = thread.Context.InvokeAsync(async () =>
                {
                    await Priority.Yield();
                    return 42;
                });
                answer.Wait(TimeSpan.FromSeconds(10));
                _ = answer.Result;
                thread.Complete();
                thread.Completion.GetAwaiter().GetResult();
                Thread.Sleep(1);
            }
        }
        """);

    [Fact]
    public Task Waits_InSyncOverAsyncStyle_ReportedOnTheLoopOnly() => Verifier.AnalyzeAsync("""
        class Handler
        {
            Task<string> LoadAsync() => Task.FromResult("x");

            // Called by both: blocking is reported where the loop runs it.
            string Load() => LoadAsync().Result;

            [RunsOnPriorityLoop]
            string LoadOnLoop() => {|PA0002:LoadAsync().Result|};

            void Run() => PriorityContext.Run(() => { _ = Load(); });
        }
        """);
}
