// The experiments measure the thread pool, allocations and wall-clock arrivals, and the entry-point tests redirect Console: nothing in
// this assembly runs in parallel with anything else in it.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
