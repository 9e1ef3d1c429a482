using PriorityAsync;

var options = new PriorityContextOptions
{
    Levels = 3,
    Policy = PriorityPolicy.WeightedShares(1, 2, 4),   // or PriorityPolicy.Aging(...), or PriorityPolicy.Strict
};
using var loop = new PriorityContextThread(options);   // a loop on a thread of its own, until the end of the program
loop.Context.SetShares(level: 0, shares: 3);          // weighted shares only: from any thread, while it runs

Console.WriteLine($"shares: {string.Join(", ", Enumerable.Range(0, 3).Select(loop.Context.GetShares))}");   // shares: 3, 2, 4
