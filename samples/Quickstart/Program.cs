// The README's example, whole (tools/Snippets copies it there): it runs as pasted into `dotnet new console`.
// dotnet run --project samples/Quickstart
// begin-snippet: quickstart
using PriorityAsync;
using static PriorityAsync.Priority;

TimeSpan lease = TimeSpan.FromSeconds(1);             // the bus takes back a message whose lease is not renewed within 1 s
int messages = 5, lost = 0;

PriorityContext.Run(async () =>                       // this thread becomes the loop: the most urgent level first
{
    for (int message = 1; message <= messages; message++) // level 0: receives whenever nothing more urgent waits
    {
        await Delay(TimeSpan.FromMilliseconds(20));   // stands for the bus's round trip
        Start(_ => HandleAsync(), level: 2);          // a child of the loop: Run waits for it and rethrows its failure
    }
}, new PriorityContextOptions { Levels = 3 });

Console.WriteLine($"{messages - lost} messages completed, {lost} lost");

async Task HandleAsync()
{
    DateTime until = DateTime.UtcNow + lease;         // leased until then
    await TaskScope.RunAsync(async scope =>           // owns the lease keeper: it cannot outlive the message
    {
        scope.Start(async stop =>                     // the lease keeper, at level 2: runs as soon as it is due
        {
            while (true)                              // until the scope cancels it (a cancelled child is no failure)
            {
                await Delay(lease / 4, stop);         // a timer of the loop: resumes here, at level 2
                until = DateTime.UtcNow > until ? DateTime.MinValue : DateTime.UtcNow + lease; // renewed, unless too late
            }
        }, level: 2);
        await Prioritize(1);                          // the processing runs at level 1, below every keeper
        for (int step = 0; step < 5; step++)
        {
            for (long end = Environment.TickCount64 + 100; Environment.TickCount64 < end;) { } // 100 ms of CPU work
            await Delay(TimeSpan.FromMilliseconds(100)); // stands for I/O: meanwhile the loop runs what is most urgent
        }
        scope.Cancel();                               // processed: stop keeping the lease
    });
    lost += DateTime.UtcNow > until ? 1 : 0;          // the bus completes the message only while its lease holds
}
// end-snippet
