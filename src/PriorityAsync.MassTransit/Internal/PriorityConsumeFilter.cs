using System.Threading;
using System.Threading.Tasks;
using MassTransit;

namespace PriorityAsync.MassTransit.Internal;

/// <summary>
/// The last filter before a consumer or handler: runs the rest of the pipe (the consumer itself) on the scheduler, at the message's
/// level. The consumer starts there with the level's context current, so its awaits resume on the scheduler at that level.
/// </summary>
/// <typeparam name="TContext">The consumer's (or handler's) context.</typeparam>
internal sealed class PriorityConsumeFilter<TContext>(PriorityScheduler scheduler, LevelChooser levels, int typeLevel) : IFilter<TContext>
    where TContext : class, ConsumeContext
{
    public Task Send(TContext context, IPipe<TContext> next)
    {
        int level = levels.Choose(context, typeLevel);

        // Already on the scheduler at this level (nothing since an earlier hop left it): going on here is the same as hopping,
        // without waiting behind the work queued at this level.
        if (SynchronizationContext.Current == scheduler.GetSynchronizationContext(level))
        {
            return next.Send(context);
        }

        // The pipe that called us awaits this task; its own continuation (MassTransit's, ConfigureAwait(false)) runs on the thread
        // pool once the consumer ends, not on the scheduler.
        return scheduler.InvokeAsync(() => next.Send(context), level);
    }

    public void Probe(ProbeContext context)
    {
        ProbeContext scope = context.CreateFilterScope("priorityScheduler");
        scope.Add("scheduler", scheduler.Name);
        scope.Add("levels", scheduler.Levels);
    }
}
