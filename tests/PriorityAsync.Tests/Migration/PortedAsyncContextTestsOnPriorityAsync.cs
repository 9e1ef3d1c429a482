namespace PriorityAsync.Tests.Migration;

/// <summary>The ported tests on PriorityAsync: the same bodies, the same outcomes.</summary>
public sealed class PortedAsyncContextTestsOnPriorityAsync() : PortedAsyncContextTests(ContextLibrary.PriorityAsync);
