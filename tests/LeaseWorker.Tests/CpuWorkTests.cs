namespace LeaseWorker.Tests;

public class CpuWorkTests
{
    private static readonly TimeSpan s_part = TimeSpan.FromMilliseconds(30);

    [Fact]
    public void Run_Spin_UsesAtLeastItsDurationOfThisThreadsCpuTime()
    {
        // Bounds that hold by construction, whatever the machine is doing: spinning stops only once the thread's own CPU clock
        // has advanced by the duration (so a descheduled spinner takes longer, as real CPU work would).
        TimeSpan before = NativeTime.CurrentThreadCpuTime()!.Value;

        CpuWork.Run(CpuKind.Spin, s_part);

        (NativeTime.CurrentThreadCpuTime()!.Value - before).Should().BeGreaterThanOrEqualTo(s_part);
    }

    [Fact]
    public void Run_Sleep_BlocksWithoutUsingTheCpu()
    {
        TimeSpan before = NativeTime.CurrentThreadCpuTime()!.Value;

        CpuWork.Run(CpuKind.Sleep, s_part);

        (NativeTime.CurrentThreadCpuTime()!.Value - before).Should().BeLessThan(s_part / 2);
    }
}
