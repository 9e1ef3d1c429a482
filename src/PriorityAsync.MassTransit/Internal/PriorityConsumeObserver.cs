using MassTransit;
using MassTransit.Configuration;

namespace PriorityAsync.MassTransit.Internal;

/// <summary>
/// Puts the hop onto the scheduler into the pipe of every consumer and handler of an endpoint. MassTransit calls the observers when it
/// validates the configuration, after every filter the user configured has been added, and appends the consumer itself after
/// them: so the hop is the last filter before the consumer's <c>Consume</c> (docs/masstransit.md, "Where the hop sits").
/// </summary>
internal sealed class PriorityConsumeObserver(PriorityScheduler scheduler, LevelChooser levels) : IConsumerConfigurationObserver, IHandlerConfigurationObserver
{
    public void ConsumerConfigured<TConsumer>(IConsumerConfigurator<TConsumer> configurator)
        where TConsumer : class
    {
    }

    public void ConsumerMessageConfigured<TConsumer, TMessage>(IConsumerMessageConfigurator<TConsumer, TMessage> configurator)
        where TConsumer : class
        where TMessage : class =>
        configurator.AddPipeSpecification(
            new PriorityConsumeSpecification<ConsumerConsumeContext<TConsumer, TMessage>>(scheduler, levels, levels.LevelOf(typeof(TMessage))));

    public void HandlerConfigured<TMessage>(IHandlerConfigurator<TMessage> configurator)
        where TMessage : class =>
        configurator.AddPipeSpecification(new PriorityConsumeSpecification<ConsumeContext<TMessage>>(scheduler, levels, levels.LevelOf(typeof(TMessage))));
}
