// The entry-point tests redirect Console, and the real-time runs (RealTimeTests, StarvedPoolTests, the entry point's own runs) share
// the process's thread pool: nothing in this assembly runs in parallel with anything else in it.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
