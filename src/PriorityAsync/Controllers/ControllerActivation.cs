using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>
/// The loop item through which a <see cref="PriorityTaskController"/> runs its queued work: one generation of the controller's place
/// in the FIFO of its level ([C-CONTROLLER]). Reused while the level does not change, so running the
/// controller's items allocates nothing; <see cref="PriorityTaskController.SetLevel"/> makes a new one, and the old one goes stale.
/// </summary>
internal sealed class ControllerActivation(PriorityTaskController controller)
{
    /// <summary>The queued callback; recognisable by reference, so the context hands a dropped activation to its controller.</summary>
    public static readonly SendOrPostCallback Callback = static state =>
    {
        var activation = (ControllerActivation)state!;
        activation.Controller.RunActivation(activation);
    };

    public PriorityTaskController Controller => controller;

    /// <summary>The context finished with this activation still queued: if it is the current one, the controller drops its queue.</summary>
    public void OnDroppedByContext(DropReason reason) => controller.Close(reason, this);
}
