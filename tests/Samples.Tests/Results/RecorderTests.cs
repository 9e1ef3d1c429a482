using Results;

namespace Samples.Tests;

public class RecorderTests
{
    private static readonly Workload s_workload = new(1_000, urgentEvery: 5);

    [Fact]
    public void CountOvertakenUrgent_NonUrgentOfTheSameBatchFirst_CountsIt()
    {
        (int urgent, int nonUrgent) = PairInOneBatch();
        var recorder = new Recorder(s_workload, TimeSpan.Zero);

        recorder.Process(nonUrgent);
        recorder.Process(urgent);

        recorder.CountOvertakenUrgent().Should().Be(1);
    }

    [Fact]
    public void CountOvertakenUrgent_NonUrgentOfALaterBatchFirst_CountsIt()
    {
        int urgent = Enumerable.Range(0, s_workload.Count).First(c => s_workload.IsUrgent[c] && s_workload.BatchOf[c] == 0);
        int later = Enumerable.Range(0, s_workload.Count).First(c => !s_workload.IsUrgent[c] && s_workload.BatchOf[c] == 5);
        var recorder = new Recorder(s_workload, TimeSpan.Zero);

        recorder.Process(later);
        recorder.Process(urgent);

        recorder.CountOvertakenUrgent().Should().Be(1);
    }

    [Fact]
    public void CountOvertakenUrgent_UrgentFirstOrNonUrgentOfAnEarlierBatchFirst_CountsNothing()
    {
        (int urgent, int nonUrgent) = PairInOneBatch();
        int earlier = Enumerable.Range(0, s_workload.Count)
            .First(c => !s_workload.IsUrgent[c] && s_workload.BatchOf[c] < s_workload.BatchOf[urgent]);
        var recorder = new Recorder(s_workload, TimeSpan.Zero);

        recorder.Process(earlier);
        recorder.Process(urgent);
        recorder.Process(nonUrgent);

        recorder.CountOvertakenUrgent().Should().Be(0);
    }

    [Fact]
    public void CountNotProcessedExactlyOnce_MissingAndRepeatedResults_CountsEach()
    {
        var workload = new Workload(3, urgentEvery: 5);
        var recorder = new Recorder(workload, TimeSpan.Zero);

        recorder.Process(0);
        recorder.Process(0);

        recorder.CountNotProcessedExactlyOnce().Should().Be(3, "call 0 twice, calls 1 and 2 never");
    }

    private static (int Urgent, int NonUrgent) PairInOneBatch()
    {
        int urgent = Enumerable.Range(0, s_workload.Count).First(c => s_workload.IsUrgent[c] && s_workload.BatchOf[c] > 0);
        int nonUrgent = Enumerable.Range(0, s_workload.Count)
            .First(c => !s_workload.IsUrgent[c] && s_workload.BatchOf[c] == s_workload.BatchOf[urgent]);
        return (urgent, nonUrgent);
    }
}
