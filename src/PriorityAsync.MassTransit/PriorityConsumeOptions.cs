using System;
using System.Collections.Generic;
using MassTransit;

namespace PriorityAsync.MassTransit;

/// <summary>
/// How <see cref="PriorityConsumeConfigurationExtensions.UsePriorityScheduler"/> chooses the level of each message: the first rule
/// that gives one wins, in this order: <see cref="LevelSelector"/>, <see cref="LevelHeader"/>, <see cref="MessageLevel{TMessage}"/>,
/// <see cref="DefaultLevel"/>.
/// </summary>
/// <remarks>A higher level runs first. The levels are the scheduler's: 0 to <c>Levels - 1</c>.</remarks>
public sealed class PriorityConsumeOptions
{
    private readonly List<(Type MessageType, int Level)> _messageLevels = [];

    /// <summary>Gets or sets the level of a message that no other rule gives one.</summary>
    /// <value>The default value is <see langword="null"/>: the scheduler's <see cref="PriorityScheduler.DefaultLevel"/>.</value>
    public int? DefaultLevel { get; set; }

    /// <summary>
    /// Gets or sets the name of a header that carries the level (an integer, or a string of one). A value outside the scheduler's
    /// levels is clamped into them, as RabbitMQ caps a message's priority at the queue's <c>x-max-priority</c>; a header that is
    /// missing or not an integer leaves the choice to the next rule.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: no header is read.</value>
    public string? LevelHeader { get; set; }

    /// <summary>
    /// Gets or sets a delegate that chooses the level from the message's context (its headers, the transport's properties such
    /// as RabbitMQ's <c>priority</c>, the message), or returns <see langword="null"/> to leave the choice to the next rule. It runs on
    /// the thread that delivers the message, before the message is queued; a level outside the scheduler's levels faults the message
    /// with <see cref="InvalidOperationException"/>, whose message names the level and the range.
    /// </summary>
    /// <value>The default value is <see langword="null"/>: no delegate.</value>
    public Func<ConsumeContext, int?>? LevelSelector { get; set; }

    internal IReadOnlyList<(Type MessageType, int Level)> MessageLevels => _messageLevels;

    /// <summary>
    /// Runs the consumers of <typeparamref name="TMessage"/> (and of every message type assignable to it: a base class, an
    /// interface) at <paramref name="level"/>. When several registrations match a message type, the first one made wins.
    /// </summary>
    /// <typeparam name="TMessage">The message type.</typeparam>
    /// <param name="level">The level, from 0 to the scheduler's <c>Levels - 1</c> (checked when the endpoint is configured).</param>
    /// <returns>These options, to chain calls.</returns>
    public PriorityConsumeOptions MessageLevel<TMessage>(int level)
        where TMessage : class
    {
        _messageLevels.Add((typeof(TMessage), level));
        return this;
    }
}
