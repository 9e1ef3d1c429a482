using System.Collections.Generic;
using System.Linq;
using MassTransit;
using MassTransit.Configuration;

namespace PriorityAsync.MassTransit.Internal;

/// <summary>Adds one <see cref="PriorityConsumeFilter{TContext}"/> to a consumer's or handler's pipe.</summary>
/// <typeparam name="TContext">The consumer's (or handler's) context.</typeparam>
internal sealed class PriorityConsumeSpecification<TContext>(PriorityScheduler scheduler, LevelChooser levels, int typeLevel) : IPipeSpecification<TContext>
    where TContext : class, ConsumeContext
{
    public void Apply(IPipeBuilder<TContext> builder) => builder.AddFilter(new PriorityConsumeFilter<TContext>(scheduler, levels, typeLevel));

    public IEnumerable<ValidationResult> Validate() => Enumerable.Empty<ValidationResult>();
}
