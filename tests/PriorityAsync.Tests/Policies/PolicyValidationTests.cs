using PriorityAsync.Tests.Infrastructure;

namespace PriorityAsync.Tests.Policies;

/// <summary>Bad policy input throws ArgumentOutOfRangeException naming the value and the valid range, as early as possible: the
/// factory methods check each value, the context's creation checks the count against Levels, SetShares checks the new value.</summary>
public sealed class PolicyValidationTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(10_001)]
    [InlineData(int.MinValue)]
    public void WeightedShares_SharesOutOfRange_Throws(int shares)
    {
        Action create = () => PriorityPolicy.WeightedShares(1, shares, 4);
        var ex = create.Should().Throw<ArgumentOutOfRangeException>().Which;
        ex.ParamName.Should().Be("sharesPerLevel[1]");
        ex.ActualValue.Should().Be(shares);
        ex.Message.Should().Contain("between 1 and 10000").And.Contain("level 1");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    public void Aging_BoundNotPositive_Throws(int milliseconds)
    {
        Action create = () => PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(milliseconds));
        var ex = create.Should().Throw<ArgumentOutOfRangeException>().Which;
        ex.ParamName.Should().Be("maxWaitPerLevel[1]");
        ex.ActualValue.Should().Be(TimeSpan.FromMilliseconds(milliseconds));
        ex.Message.Should().Contain("above zero and at most 1.00:00:00");
    }

    [Fact]
    public void Aging_BoundAboveOneDay_Throws() =>
        ((Action)(() => PriorityPolicy.Aging(TimeSpan.FromDays(2)))).Should().Throw<ArgumentOutOfRangeException>()
            .Which.ParamName.Should().Be("maxWaitPerLevel[0]");

    [Fact]
    public void Factories_NoValuesOrTooMany_Throw()
    {
        ((Action)(() => PriorityPolicy.WeightedShares())).Should().Throw<ArgumentOutOfRangeException>()
            .Which.Message.Should().Contain("between 1 and 64 values");
        ((Action)(() => PriorityPolicy.Aging(Enumerable.Repeat(TimeSpan.FromSeconds(1), 65).ToArray()))).Should().Throw<ArgumentOutOfRangeException>()
            .Which.ActualValue.Should().Be(65);
        ((Action)(() => PriorityPolicy.WeightedShares(null!))).Should().Throw<ArgumentNullException>();
        ((Action)(() => PriorityPolicy.Aging(null!))).Should().Throw<ArgumentNullException>();
    }

    [Fact]
    public void ContextCreation_ValueCountNotLevels_Throws()
    {
        var options = new PriorityContextOptions { Levels = 3, Policy = PriorityPolicy.WeightedShares(1, 2) };
        Action create = () => new PriorityContextThread(options).Dispose();
        var ex = create.Should().Throw<ArgumentOutOfRangeException>().Which;
        ex.ParamName.Should().Be("Policy");
        ex.ActualValue.Should().Be(2);
        ex.Message.Should().Contain("it must be a policy with one value per level: 3");

        options.Policy = PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));
        Action run = () => PriorityContext.Run(() => { }, options);
        run.Should().Throw<ArgumentOutOfRangeException>().Which.ActualValue.Should().Be(4);
    }

    [Fact]
    public void Options_NullPolicy_Throws() =>
        ((Action)(() => new PriorityContextOptions().Policy = null!)).Should().Throw<ArgumentNullException>();

    [Fact]
    public void SetShares_BadValueOrLevel_Throws()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 3, Policy = PriorityPolicy.WeightedShares(1, 2, 4) });
        using var disposeLoop = loop.BoundedDisposal();
        var ex = ((Action)(() => loop.Context.SetShares(2, 0))).Should().Throw<ArgumentOutOfRangeException>().Which;
        ex.ParamName.Should().Be("shares");
        ex.ActualValue.Should().Be(0);
        ex.Message.Should().Contain("between 1 and 10000");
        ((Action)(() => loop.Context.SetShares(3, 5))).Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("level");
        ((Action)(() => loop.Context.GetShares(-1))).Should().Throw<ArgumentOutOfRangeException>();
        loop.Context.GetShares(2).Should().Be(4, "the value was rejected");
        loop.Context.SetShares(2, 10_000);
        loop.Context.GetShares(2).Should().Be(10_000);
    }

    [Fact]
    public void SetShares_UnderAnotherPolicy_ThrowsNamingThePolicy()
    {
        var loop = new PriorityContextThread(new PriorityContextOptions { Levels = 2 });
        using var disposeLoop = loop.BoundedDisposal();
        loop.Context.Policy.Should().BeSameAs(PriorityPolicy.Strict);
        ((Action)(() => loop.Context.SetShares(0, 1))).Should().Throw<InvalidOperationException>()
            .Which.Message.Should().Contain("runs Strict").And.Contain("PriorityPolicy.WeightedShares");
    }

    [Fact]
    public void Policies_DescribeThemselves()
    {
        PriorityPolicy.WeightedShares(1, 2, 4).ToString().Should().Be("WeightedShares(1:2:4)");
        PriorityPolicy.Aging(TimeSpan.FromSeconds(1), TimeSpan.FromMilliseconds(50)).ToString().Should().Be("Aging(1000 ms, 50 ms)");
        PriorityPolicy.WeightedShares(1, 2).SharesPerLevel.Should().Equal(1, 2);
    }
}
