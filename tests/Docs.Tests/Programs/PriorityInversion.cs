using PriorityAsync;
using static PriorityAsync.Priority;

// One loop, three levels: level 0 holds a lock across an I/O call of 2 ms, level 1 floods the loop with CPU items of 5 ms, and
// level 2 is a lease keeper that needs the same lock every 50 ms. On a VirtualTimeProvider the CPU items advance the clock (nothing
// else runs meanwhile), so the waits printed are exact. With a SemaphoreSlim(1, 1) instead, the keeper waits for the whole flood.
var clock = new VirtualTimeProvider();
var client = new PriorityLock { Name = "client" };
DateTimeOffset end = clock.GetUtcNow() + TimeSpan.FromSeconds(3);
TimeSpan worst = TimeSpan.Zero;
int renewals = 0;

PriorityContext.Run(() =>
{
    Start(async _ =>                                            // level 0: the client around an I/O call
    {
        while (clock.GetUtcNow() < end)
        {
            using (await client.LockAsync())
            {
                await Task.Delay(TimeSpan.FromMilliseconds(2), clock);
            }
        }
    }, level: 0);
    Start(async stop =>                                         // level 1: the flood, from 1 ms on
    {
        await Delay(TimeSpan.FromMilliseconds(1), stop);
        while (clock.GetUtcNow() < end)
        {
            clock.Advance(TimeSpan.FromMilliseconds(5));        // a CPU-bound item
            await Yield();
        }
    }, level: 1);
    Start(async stop =>                                         // level 2: the keeper
    {
        while (clock.GetUtcNow() < end)
        {
            await Delay(TimeSpan.FromMilliseconds(50), stop);
            DateTimeOffset asked = clock.GetUtcNow();
            using (await client.LockAsync())                    // the holder runs at level 2 until it releases
            {
                renewals++;
            }

            TimeSpan waited = clock.GetUtcNow() - asked;
            worst = waited > worst ? waited : worst;
        }
    }, level: 2);
}, new PriorityContextOptions { Levels = 3, TimeProvider = clock });

Console.WriteLine($"{renewals} renewals, the longest wait {worst.TotalMilliseconds} ms"); // 55 renewals, the longest wait 5 ms
