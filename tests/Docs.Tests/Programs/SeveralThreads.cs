using PriorityAsync;
using static PriorityAsync.Priority;

await using var pool = new PriorityThreadPool(new PriorityThreadPoolOptions
{
    Levels = 2,                               // 0: bulk re-indexing, 1: requests
    ThreadCount = Environment.ProcessorCount, // the default
    MaxConcurrencyPerLevel = [Math.Max(1, Environment.ProcessorCount - 1), Environment.ProcessorCount], // one kept for requests
});

int indexed = 0;                              // shared by the pool's threads: update it atomically
PriorityTask[] bulk = Enumerable.Range(1, 50).Select(document => pool.InvokeAsync(async () =>
{
    Index(document);                          // CPU work, on any of the pool's threads
    Interlocked.Increment(ref indexed);
    await Checkpoint();                       // lets a waiting request in first
}, level: 0)).ToArray();

int answer = await pool.InvokeAsync(() => Task.FromResult(42), level: 1); // overtakes the queued bulk work
await PriorityTask.WhenAll(bulk);
Console.WriteLine($"answer {answer}, {indexed} documents indexed");      // answer 42, 50 documents indexed

static void Index(int document) => Thread.SpinWait(200_000);             // stands for CPU work
