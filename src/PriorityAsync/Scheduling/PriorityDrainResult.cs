using System;

namespace PriorityAsync;

/// <summary>What one <see cref="PriorityContextDriver.Drain()"/> did: how many items it ran, whether work is left for the next drain,
/// whether the budget is what stopped it, and how long it took.</summary>
/// <param name="ItemsRun">The items the drain started (continuations, callbacks, timer firings), the exempt levels' included.</param>
/// <param name="WorkRemains">Whether work is still ready when the drain returns (queued, or a loop timer due), or the context is ready
/// to end: the host should drain again soon (its next frame; a UI loop posts itself a message). <see langword="false"/> means the host
/// is counted idle, and the <c>workAvailable</c> callback tells it when that changes.</param>
/// <param name="BudgetSpent">Whether the budget ran out while work of the levels it holds back was ready: that work waits for the next
/// drain. Always <see langword="false"/> without a budget.</param>
/// <param name="Elapsed">How long the drain took, on <see cref="PrioritySchedulerOptions.TimeProvider"/>'s clock (the clock its budget is
/// measured on); <see cref="TimeSpan.Zero"/> for a drain that found nothing to do.</param>
/// <remarks>The default value is what a drain that found nothing to do returns.</remarks>
public readonly record struct PriorityDrainResult(int ItemsRun, bool WorkRemains, bool BudgetSpent, TimeSpan Elapsed);
