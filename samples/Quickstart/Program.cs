// The README's example, whole (tools/Snippets copies it there); Bus.cs beside it is the in-memory bus it uses.
// dotnet run --project samples/Quickstart
// begin-snippet: quickstart
// Needs: samples/Quickstart/Bus.cs beside it (an in-memory bus that leases messages).
using PriorityAsync;
using static PriorityAsync.Priority;

var bus = new InMemoryBus(messages: 5, leaseTime: TimeSpan.FromSeconds(1));   // a lease not renewed in time is lost

PriorityContext.Run(async () =>                       // this thread becomes the loop: the most urgent level first
{
    while (await bus.ReceiveAsync() is { } message)   // level 0: receives only when nothing more urgent waits
    {
        Start(_ => HandleAsync(message), level: 2);   // a child of the loop: Run waits for it and rethrows its failure
    }
}, new PriorityContextOptions { Levels = 3 });

Console.WriteLine($"{bus.Completed} messages completed, {bus.Lost} lost");

async Task HandleAsync(Message message)
{
    await TaskScope.RunAsync(async scope =>           // owns the lease keeper: it cannot outlive the message
    {
        scope.Start(async stop =>                     // the lease keeper, at level 2: runs as soon as it is due
        {
            while (true)                              // until the scope cancels it (a cancelled child is no failure)
            {
                await Delay(bus.LeaseTime / 4, stop); // a timer of the loop: resumes here, at level 2
                await bus.RenewAsync(message);
            }
        }, level: 2);

        await Prioritize(1);                          // the processing runs at level 1, below every keeper
        for (int step = 0; step < 5; step++)
        {
            Cpu.Work(TimeSpan.FromMilliseconds(100)); // CPU work: blocks the thread, keepers included
            await Delay(TimeSpan.FromMilliseconds(100)); // stands for I/O: meanwhile the loop runs what is most urgent
        }

        scope.Cancel();                               // processed: stop keeping the lease
    });

    await bus.CompleteAsync(message);
}
// end-snippet
