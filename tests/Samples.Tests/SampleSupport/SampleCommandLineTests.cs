using System.CommandLine;
using Samples.Support;

namespace Samples.Tests.SampleSupport;

/// <summary>The conventions every sample's command line shares (samples/SampleSupport): forms, one-line errors, generated help.</summary>
public sealed class SampleCommandLineTests
{
    private readonly SampleCommandLine _line = new("A test sample. Exit code: 0 when it ran, 2 for bad arguments.");
    private readonly Option<TimeSpan?> _cpu;
    private readonly Option<int> _count;
    private readonly Option<string> _format;
    private readonly Option<IReadOnlyList<string>> _modes;
    private readonly Option<IReadOnlyList<int>> _sizes;

    public SampleCommandLineTests()
    {
        _cpu = _line.Add(SampleCommandLine.Duration("--cpu", TimeSpan.FromSeconds(1), "CPU part", offAllowed: true));
        _count = _line.Add(SampleCommandLine.WholeNumber("--count", 12, "how many"));
        _format = _line.Add(SampleCommandLine.Choice("--format", "table", "table or json", "table", "json"));
        _modes = _line.Add(SampleCommandLine.List("--modes", ["a", "b", "c"], ["a", "b"], "mode", "some of a,b,c"));
        _sizes = _line.Add(SampleCommandLine.WholeNumbers("--sizes", [10, 1000], 1, 100_000, "numbers of calls"));
    }

    [Theory]
    [InlineData("--cpu 250ms --count 3 --format JSON --modes c,a,c")]
    [InlineData("--cpu=250ms --count=3 --format=json --modes=c,a")]
    public void TryParse_BothForms_GiveTheValues(string commandLine)
    {
        _line.TryParse(commandLine.Split(' '), out ParseResult result, out string? show, out string? error).Should().BeTrue(error);

        show.Should().BeNull();
        SampleCommandLine.GetDuration(result, _cpu).Should().Be(TimeSpan.FromMilliseconds(250));
        result.GetValue(_count).Should().Be(3);
        result.GetValue(_format).Should().Be("json");
        SampleCommandLine.GetList(result, _modes).Should().Equal("c", "a");
    }

    [Fact]
    public void TryParse_Nothing_GivesTheDefaults()
    {
        _line.TryParse([], out ParseResult result, out _, out string? error).Should().BeTrue(error);

        (SampleCommandLine.GetDuration(result, _cpu), result.GetValue(_count), result.GetValue(_format)).Should().Be((TimeSpan.FromSeconds(1), 12, "table"));
        SampleCommandLine.GetList(result, _modes).Should().Equal("a", "b");
        SampleCommandLine.GetList(result, _sizes).Should().Equal(10, 1000);
    }

    [Theory]
    [InlineData("--modes all")]
    [InlineData("--modes=ALL")]
    public void List_All_IsEveryItem(string commandLine)
    {
        _line.TryParse(commandLine.Split(' '), out ParseResult result, out _, out string? error).Should().BeTrue(error);

        SampleCommandLine.GetList(result, _modes).Should().Equal("a", "b", "c");
    }

    [Fact]
    public void WholeNumbers_KeepOrderAndDuplicates()
    {
        _line.TryParse(["--sizes", "300, 1_000,300"], out ParseResult result, out _, out string? error).Should().BeTrue(error);

        SampleCommandLine.GetList(result, _sizes).Should().Equal(300, 1000, 300);
    }

    [Theory]
    [InlineData("", "--trace needs a file name (got '').")]
    [InlineData("/no/such/folder/t.json", "--trace: the folder '/no/such/folder' does not exist (got '/no/such/folder/t.json').")]
    [InlineData(".", "--trace needs a file name (got '.').")]
    [InlineData("t.json", null)]
    public void OutputFile_NeedsAFileNameInAFolderThatExists(string path, string? expected)
    {
        var line = new SampleCommandLine("A test sample.");
        line.Add(SampleCommandLine.OutputFile("--trace", "FILE", "the trace"));

        bool parsed = line.TryParse(["--trace", path], out _, out _, out string? error);

        (parsed, error).Should().Be((expected is null, expected));
    }

    [Fact]
    public void Version_PrintsTheCallersNameAndVersionAndPriorityAsyncs_AndNothingElseRuns()
    {
        _line.TryParse(["--version"], out _, out string? show, out string? error).Should().BeTrue(error);

        show.Should().StartWith("Samples.Tests ").And.Contain(" (PriorityAsync ").And.EndWith(")" + Environment.NewLine);
        show.Should().Be(_line.Version + Environment.NewLine);
    }

    [Theory]
    [InlineData("10us", 0.01)]
    [InlineData("1.5s", 1500)]
    [InlineData("-2ms", -2)]
    public void Duration_UnitsAndSigns_Parse(string text, double milliseconds)
    {
        _line.TryParse(["--cpu", text], out ParseResult result, out _, out string? error).Should().BeTrue(error);

        SampleCommandLine.GetDuration(result, _cpu).Should().Be(TimeSpan.FromMilliseconds(milliseconds));
    }

    [Fact]
    public void Duration_Off_IsNull()
    {
        _line.TryParse(["--cpu", "off"], out ParseResult result, out _, out _).Should().BeTrue();

        SampleCommandLine.GetDuration(result, _cpu).Should().BeNull();
    }

    [Theory]
    [InlineData("--bogus 1", "unknown option '--bogus' (see --help).")]
    [InlineData("stray", "unexpected argument 'stray' (see --help).")]
    [InlineData("--cpu", "--cpu needs a value (see --help).")]
    [InlineData("--cpu 1", "--cpu must be a duration such as 250ms or 1.5s, or off (got '1').")]
    [InlineData("--count many", "--count must be a whole number (got 'many').")]
    [InlineData("--format xml", "--format must be table or json (got 'xml').")]
    [InlineData("--modes a,z", "unknown mode 'z'; the modes are a, b, c.")]
    [InlineData("--modes ,", "--modes needs at least one mode.")]
    [InlineData("--modes a --modes b", "--modes is given more than once (see --help).")]
    [InlineData("--mode a", "unknown option '--mode' (see --help).")]
    [InlineData("--modes a b", "unexpected argument 'b' (see --help).")]
    [InlineData("--count 1 --count 2", "--count is given more than once (see --help).")]
    [InlineData("--sizes 10,x", "--sizes must be whole numbers from 1 to 100000 separated by commas (got '10,x').")]
    [InlineData("--sizes 0", "--sizes must be whole numbers from 1 to 100000 separated by commas (got '0').")]
    [InlineData("--sizes ,", "--sizes needs at least one number.")]
    public void TryParse_BadInput_OneLineInTheSameWordsEverywhere(string commandLine, string expected)
    {
        _line.TryParse(commandLine.Split(' '), out _, out _, out string? error).Should().BeFalse();

        error.Should().Be(expected);
    }

    [Theory]
    [InlineData("-h")]
    [InlineData("--help")]
    [InlineData("-?")]
    public void Help_AnyFlag_IsGeneratedFromTheOptions(string flag)
    {
        _line.TryParse([flag], out _, out string? show, out _).Should().BeTrue();

        show.Should().Be(_line.Help());
        string text = _line.Help();
        text.Should().Contain("A test sample.").And.Contain("--cpu <D|off>").And.Contain("CPU part [default: 1s]")
            .And.Contain("--format <table|json>").And.Contain("[default: table]").And.Contain("[default: a,b]").And.Contain("--sizes <N[,N]>").And.Contain("[default: 10,1000]");
    }
}
