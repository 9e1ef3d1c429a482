using System;
using System.Globalization;
using MassTransit;

namespace PriorityAsync.MassTransit.Internal;

/// <summary>The rules of <see cref="PriorityConsumeOptions"/>, checked against the scheduler's levels once, when the endpoint is configured.</summary>
internal sealed class LevelChooser
{
    private readonly PriorityConsumeOptions _options;
    private readonly int _levels;
    private readonly int _defaultLevel;

    public LevelChooser(PriorityScheduler scheduler, PriorityConsumeOptions options)
    {
        _options = options;
        _levels = scheduler.Levels;
        _defaultLevel = Check(options.DefaultLevel ?? scheduler.DefaultLevel, "DefaultLevel");
        foreach ((Type messageType, int level) in options.MessageLevels)
        {
            Check(level, $"MessageLevel<{messageType.Name}>");
        }

        if (options.LevelHeader is { } header && string.IsNullOrWhiteSpace(header))
        {
            throw new ArgumentException("LevelHeader is empty; give a header name, or null to read no header.", nameof(options));
        }
    }

    /// <summary>The level of every message of <paramref name="messageType"/> that neither the delegate nor the header decides.</summary>
    public int LevelOf(Type messageType)
    {
        foreach ((Type registered, int level) in _options.MessageLevels)
        {
            if (registered.IsAssignableFrom(messageType))
            {
                return level;
            }
        }

        return _defaultLevel;
    }

    /// <summary>The level of one message: the delegate's, else the header's (clamped), else its type's.</summary>
    public int Choose(ConsumeContext context, int typeLevel)
    {
        if (_options.LevelSelector?.Invoke(context) is { } chosen)
        {
            return chosen >= 0 && chosen < _levels
                ? chosen
                : throw new InvalidOperationException($"LevelSelector chose level {chosen}; the scheduler's levels are 0 to {_levels - 1}.");
        }

        if (_options.LevelHeader is { } header && context.Headers.TryGetHeader(header, out object? value) && TryGetInteger(value, out long level))
        {
            return (int)Math.Clamp(level, 0, _levels - 1);
        }

        return typeLevel;
    }

    private int Check(int level, string name) => level >= 0 && level < _levels
        ? level
        : throw new ArgumentOutOfRangeException(name, level, $"{name} is {level}; the scheduler's levels are 0 to {_levels - 1}.");

    private static bool TryGetInteger(object? value, out long level)
    {
        switch (value)
        {
            case int i: level = i; return true;
            case long l: level = l; return true;
            case short s: level = s; return true;
            case byte b: level = b; return true;
            case sbyte sb: level = sb; return true;
            case uint ui: level = ui; return true;
            case string text: return long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out level);
            default: level = 0; return false;
        }
    }
}
