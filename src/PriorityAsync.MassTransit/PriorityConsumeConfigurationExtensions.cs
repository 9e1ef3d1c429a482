using System;
using MassTransit;
using PriorityAsync.MassTransit.Internal;

namespace PriorityAsync.MassTransit;

/// <summary>Runs MassTransit consumers and handlers on a PriorityAsync scheduler, at a level chosen per message.</summary>
public static class PriorityConsumeConfigurationExtensions
{
    /// <summary>
    /// Runs every consumer and handler configured on this receive endpoint (or, on the bus configurator, on every endpoint) on
    /// <paramref name="scheduler"/>, at the level <paramref name="configure"/> chooses for each message. The consumer starts on the
    /// scheduler and its awaits resume there, at its level; a message at a higher level overtakes the queued messages of lower
    /// levels (the ones already delivered to this process: the prefetch).
    /// </summary>
    /// <param name="configurator">The receive endpoint's (or the bus's) consume pipe configurator.</param>
    /// <param name="scheduler">A <see cref="PriorityContext"/> or <see cref="PriorityThreadPool"/> that runs until the bus has stopped.</param>
    /// <param name="configure">Chooses the levels; by default every message runs at the scheduler's default level.</param>
    /// <remarks>
    /// <para>The hop onto the scheduler is the last filter before the consumer (or handler) itself, after every filter configured on
    /// the endpoint or the consumer, so that a filter awaiting I/O with <c>ConfigureAwait(false)</c> (an outbox's lookup, a retry's
    /// delay) cannot start the consumer on the thread pool instead. A consumer that is already on the scheduler at its level does not
    /// hop. Sagas and job consumers are not moved.</para>
    /// <para>Every message delivered at once (the endpoint's <c>PrefetchCount</c>) must reach the scheduler for its levels to decide
    /// the order: leave <c>ConcurrentMessageLimit</c> at its default (the prefetch count) or above it; a lower limit makes the
    /// rest wait in MassTransit's first-in-first-out queue, before any level applies.</para>
    /// </remarks>
    /// <exception cref="ArgumentNullException"><paramref name="configurator"/> or <paramref name="scheduler"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A level of <paramref name="configure"/> is outside the scheduler's levels.</exception>
    /// <exception cref="ArgumentException"><see cref="PriorityConsumeOptions.LevelHeader"/> is empty.</exception>
    public static void UsePriorityScheduler(this IConsumePipeConfigurator configurator, PriorityScheduler scheduler, Action<PriorityConsumeOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(configurator);
        ArgumentNullException.ThrowIfNull(scheduler);
        var options = new PriorityConsumeOptions();
        configure?.Invoke(options);
        var levels = new LevelChooser(scheduler, options);
        var observer = new PriorityConsumeObserver(scheduler, levels);
        configurator.ConnectConsumerConfigurationObserver(observer);
        configurator.ConnectHandlerConfigurationObserver(observer);
    }
}
