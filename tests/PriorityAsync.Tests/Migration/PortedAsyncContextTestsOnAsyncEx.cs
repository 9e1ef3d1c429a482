namespace PriorityAsync.Tests.Migration;

/// <summary>The ported tests on Nito.AsyncEx: they describe the behaviour a migrating user starts from.</summary>
public sealed class PortedAsyncContextTestsOnAsyncEx() : PortedAsyncContextTests(ContextLibrary.AsyncEx);
