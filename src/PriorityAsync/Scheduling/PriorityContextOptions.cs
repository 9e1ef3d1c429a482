namespace PriorityAsync;

/// <summary>Settings for a <see cref="PriorityContext"/> (<c>PriorityContext.Run</c>, a <see cref="PriorityContextThread"/>): the
/// settings every priority scheduler takes (<see cref="PrioritySchedulerOptions"/>). Validated when the context is created.</summary>
public sealed class PriorityContextOptions : PrioritySchedulerOptions
{
}
