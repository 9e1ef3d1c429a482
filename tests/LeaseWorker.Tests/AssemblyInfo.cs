// The scenario tests measure wall time and process CPU time, and the entry-point tests redirect Console: nothing in this assembly
// runs in parallel with anything else in it.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
