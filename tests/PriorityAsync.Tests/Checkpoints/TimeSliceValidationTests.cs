using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Checkpoints;

/// <summary><see cref="PrioritySchedulerOptions.TimeSlice"/>: null or 1 ms to 1 minute, checked when the context is created.</summary>
public class TimeSliceValidationTests
{
    [Fact]
    public void Default_IsTheDocumentedDefault()
    {
        new PriorityContextOptions().TimeSlice.Should().Be(PrioritySchedulerOptions.DefaultTimeSlice);
        PrioritySchedulerOptions.DefaultTimeSlice.Should().BeGreaterThanOrEqualTo(PrioritySchedulerOptions.MinTimeSlice)
            .And.BeLessThanOrEqualTo(PrioritySchedulerOptions.MaxTimeSlice);
    }

    public static TheoryData<TimeSpan> OutOfRange => new()
    {
        TimeSpan.Zero,
        TimeSpan.FromMilliseconds(-5),
        TimeSpan.FromMilliseconds(0.5),
        PrioritySchedulerOptions.MaxTimeSlice + TimeSpan.FromTicks(1),
        TimeSpan.MaxValue,
    };

    [Theory]
    [MemberData(nameof(OutOfRange))]
    public void OutOfRange_ThrowsAtCreation_NamingTheValueAndTheRange(TimeSpan slice)
    {
        Action create = () => PriorityContext.Run(() => { }, new PriorityContextOptions { TimeSlice = slice });

        create.Should().Throw<ArgumentOutOfRangeException>()
            .Where(e => e.ParamName == "TimeSlice" && Equals(e.ActualValue, slice))
            .WithMessage("*TimeSlice*null*00:00:00.0010000*00:01:00*");
    }

    [Fact]
    public void Null_AndTheBounds_AreAccepted()
    {
        foreach (TimeSpan? slice in new TimeSpan?[] { null, PrioritySchedulerOptions.MinTimeSlice, PrioritySchedulerOptions.MaxTimeSlice })
        {
            bool ran = false;
            TestTimeout.OnOwnThread(() => PriorityContext.Run(() => ran = true, new PriorityContextOptions { TimeSlice = slice }), "PriorityContext.Run");
            ran.Should().BeTrue();
        }
    }

    [Fact]
    public async Task PriorityContextThread_ValidatesToo()
    {
        Func<PriorityContextThread> create = () => new PriorityContextThread(new PriorityContextOptions { TimeSlice = TimeSpan.FromHours(1) });
        create.Should().Throw<ArgumentOutOfRangeException>().Where(e => e.ParamName == "TimeSlice");
        await Task.CompletedTask;
    }
}
