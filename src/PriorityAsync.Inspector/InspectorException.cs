using System;

namespace PriorityAsync.Inspector;

/// <summary>A failure the tool reports as one line on standard error, with its own exit code (<see cref="ExitCodes"/>).</summary>
internal sealed class InspectorException : Exception
{
    public InspectorException()
    {
    }

    public InspectorException(string message)
        : base(message)
    {
    }

    public InspectorException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    public InspectorException(int exitCode, string message, Exception? innerException = null)
        : base(message, innerException) => ExitCode = exitCode;

    public int ExitCode { get; } = ExitCodes.Failure;
}
