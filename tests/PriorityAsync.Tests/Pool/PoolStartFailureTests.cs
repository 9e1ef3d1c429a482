using PriorityAsync.Internal;
using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Pool;

/// <summary>
/// The OS may refuse a thread (a process or container thread limit): the constructor then throws what the start threw, and leaves
/// nothing behind: the threads it had started leave, the pool leaves the metrics registry (whose instruments would otherwise report it
/// for the life of the process) and its watchdogs stop. The failure is injected where the OS's would surface, before a thread starts.
/// </summary>
public sealed class PoolStartFailureTests
{
    [Theory]
    [InlineData(0, false, false)]
    [InlineData(1, false, false)]
    [InlineData(2, true, false)]
    [InlineData(1, true, false)]
    [InlineData(2, true, true)]
    [InlineData(2, false, true)]
    public async Task Constructor_ThreadFailsToStart_ThrowsItsException_AndTheStartedThreadsLeaveAndTheRegistryForgetsThePool(int failingThread, bool lockFree, bool startedThreadsParkFirst)
    {
        var refused = new OutOfMemoryException("Thread failed to start.");
        PriorityThreadPool? abandoned = null;
        var options = new PriorityThreadPoolOptions
        {
            ThreadCount = 3,
            Levels = 2,
            Name = $"start-failure-{failingThread}",
            StallTimeout = TimeSpan.FromSeconds(1),
            // Locked dispatch (a cap) or lock-free (strict, no cap): the started threads leave through either mode's path (D-N).
            MaxConcurrencyPerLevel = lockFree ? null : [2, 3],
            ThreadStartingForTests = (pool, index) =>
            {
                abandoned = pool;
                if (index == failingThread)
                {
                    if (startedThreadsParkFirst)
                    {
                        // The threads started so far are parked when the fault comes (not spinning, which leaves another way).
                        WaitUntilParked(pool, index);
                    }

                    throw refused;
                }
            },
        };
        Action create = () => _ = new PriorityThreadPool(options);
        create.Should().Throw<OutOfMemoryException>().Which.Should().BeSameAs(refused);

        abandoned.Should().NotBeNull();
        // Completion ends when the last started thread has left (or at once, when none had started).
        Func<Task> completion = () => abandoned!.Completion.WithTimeout("the started threads to leave");
        (await completion.Should().ThrowAsync<OutOfMemoryException>()).Which.Should().BeSameAs(refused);
        abandoned!.State.Should().Be(PrioritySchedulerState.Faulted);
        ContextRegistry.Live.Should().NotContain(abandoned);
    }

    private static void WaitUntilParked(PriorityThreadPool pool, int threads)
    {
        var timeout = System.Diagnostics.Stopwatch.StartNew();
        while (pool.IdleCount < threads)
        {
            if (timeout.Elapsed > TestTimeout.Unexpected)
            {
                throw new TimeoutException($"Only {pool.IdleCount} of {threads} started threads parked within {TestTimeout.Unexpected.TotalSeconds} s.");
            }

            Thread.Sleep(1);
        }
    }
}
