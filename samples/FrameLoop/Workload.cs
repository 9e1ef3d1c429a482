using System;
using System.Collections.Generic;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace FrameLoop;

/// <summary>
/// The continuations a game's main thread runs, written once for both drains: an input handler awaiting events that arrive from
/// outside, animations that each await the next frame, and waves of background loading (disk reads that complete off the main thread,
/// then a parse per asset and a long decompression with yield points, on it). Times and sizes come from <see cref="Settings"/>;
/// every random draw is made up front from the seed, so both drains get the same events.
/// </summary>
internal sealed class Workload
{
    private readonly Settings _settings;
    private readonly SimClock _clock;
    private readonly ContinuationDrain _drain;
    private readonly Random _random;
    private readonly Channel<long> _inputs = Channel.CreateUnbounded<long>(new UnboundedChannelOptions { SingleReader = true });
    private readonly List<long> _waveStarts = [];
    private TaskCompletionSource _nextFrame = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _stopping;
    private int _wave;

    public Workload(Settings settings, SimClock clock, ContinuationDrain drain)
    {
        _settings = settings;
        _clock = clock;
        _drain = drain;
        _random = new Random(settings.Seed);
    }

    /// <summary>Gets each input's latency, from its arrival to the end of its handler, in clock ticks.</summary>
    public List<long> InputLatencies { get; } = [];

    /// <summary>Gets each wave's load time, from its start to its last asset and the end of its decompression, in clock ticks.</summary>
    public List<long> WaveTimes { get; } = [];

    /// <summary>Gets the background continuations run (parses and decompression steps).</summary>
    public int BackgroundItems { get; private set; }

    /// <summary>Gets the animation steps run.</summary>
    public int AnimationSteps { get; private set; }

    /// <summary>Schedules the inputs and the waves of a run that starts at <paramref name="start"/> and lasts <paramref name="length"/>
    /// ticks, and starts the input handler and the animations.</summary>
    public void Begin(long start, long length)
    {
        long meanGap = _clock.Ticks(TimeSpan.FromTicks(TimeSpan.TicksPerSecond / _settings.InputsPerSecond));
        for (long at = start + (long)(_random.NextDouble() * 2 * meanGap); at < start + length; at += (long)(_random.NextDouble() * 2 * meanGap))
        {
            _clock.At(at, () => _inputs.Writer.TryWrite(_clock.Now)); // the device: stamped when it arrives
        }

        // A wave every period from half a second in, while the run has room for it to load.
        long period = _clock.Ticks(_settings.WavePeriod);
        for (long at = start + _clock.Ticks(Settings.FirstWave); at + period * 3 / 4 <= start + length; at += period)
        {
            _waveStarts.Add(at);
        }

        _drain.Start(Kind.Input, HandleInputs);
        for (int i = 0; i < _settings.Animations; i++)
        {
            _drain.Start(Kind.Animation, Animate);
        }
    }

    /// <summary>At the start of each frame, before the game logic: the animations' next step is due, and maybe a wave starts.</summary>
    public void OnFrameStart()
    {
        TaskCompletionSource frame = _nextFrame;
        _nextFrame = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        frame.SetResult(); // each animation's continuation is queued, at its level

        if (_wave < _waveStarts.Count && _clock.Now >= _waveStarts[_wave])
        {
            _wave++;
            StartWave(_clock.Now);
        }
    }

    /// <summary>After the last frame: the input handler and the animations finish in the next drain.</summary>
    public void End()
    {
        _stopping = true;
        _inputs.Writer.TryComplete();
        _nextFrame.TrySetResult();
    }

    private async Task HandleInputs()
    {
        while (await _inputs.Reader.WaitToReadAsync())
        {
            while (_inputs.Reader.TryRead(out long arrived))
            {
                _clock.Spend(_settings.InputCost);
                InputLatencies.Add(_clock.Now - arrived);
            }
        }
    }

    private async Task Animate()
    {
        while (true)
        {
            await _nextFrame.Task;
            if (_stopping)
            {
                return;
            }

            _clock.Spend(_settings.AnimationCost);
            AnimationSteps++;
        }
    }

    private void StartWave(long started)
    {
        // Drawn now, in frame order: both drains get the same reads and parses.
        var reads = new long[_settings.Assets];
        var parses = new TimeSpan[_settings.Assets];
        for (int i = 0; i < reads.Length; i++)
        {
            reads[i] = started + (long)(_random.NextDouble() * _clock.Ticks(_settings.ReadSpread));
            parses[i] = _settings.ParseMin + (_settings.ParseMax - _settings.ParseMin) * _random.NextDouble();
        }

        _drain.Start(Kind.Background, () => LoadWave(started, reads, parses));
    }

    private async Task LoadWave(long started, long[] reads, TimeSpan[] parses)
    {
        var loads = new Task[reads.Length + 1];
        for (int i = 0; i < reads.Length; i++)
        {
            loads[i] = LoadAsset(reads[i], parses[i]);
        }

        loads[^1] = DecompressAsync();
        await Task.WhenAll(loads);
        WaveTimes.Add(_clock.Now - started);
    }

    private async Task LoadAsset(long readDone, TimeSpan parse)
    {
        var read = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _clock.At(readDone, read.SetResult); // the disk: completes off the main thread
        await read.Task;
        _clock.Spend(parse); // parse and upload: a continuation on the main thread that cannot yield
        BackgroundItems++;
    }

    private async Task DecompressAsync()
    {
        for (TimeSpan done = TimeSpan.Zero; done < _settings.Decompress; done += _settings.DecompressStep)
        {
            _clock.Spend(_settings.DecompressStep);
            BackgroundItems++;
            await _drain.YieldPoint();
        }
    }
}
