using System.Threading;

namespace PriorityAsync.Internal;

/// <summary>A spin lock in one int, for critical sections of a few field writes (a flow's queue, a node's links): no allocation, no
/// kernel object. Contention is rare (two threads of a pool on one flow at once); a waiter spins, then yields its core.</summary>
internal struct SpinFlag
{
    private int _taken;

    public void Enter()
    {
        if (Interlocked.CompareExchange(ref _taken, 1, 0) != 0)
        {
            EnterContended();
        }
    }

    public void Exit() => Volatile.Write(ref _taken, 0);

    private void EnterContended()
    {
        var spinner = default(SpinWait);
        do
        {
            spinner.SpinOnce(sleep1Threshold: -1);
        }
        while (Volatile.Read(ref _taken) != 0 || Interlocked.CompareExchange(ref _taken, 1, 0) != 0);
    }
}
