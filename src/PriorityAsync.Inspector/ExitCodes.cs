namespace PriorityAsync.Inspector;

/// <summary>The tool's exit codes (docs/inspector.md, "Exit codes"): one per way an attach can fail, so scripts can tell them apart.</summary>
internal static class ExitCodes
{
    /// <summary>Done: the view was closed, the snapshot printed, or the recording written.</summary>
    public const int Success = 0;

    /// <summary>Something unexpected failed (the message says what).</summary>
    public const int Failure = 1;

    /// <summary>The command line is wrong.</summary>
    public const int Usage = 2;

    /// <summary>No process has that id, or none has that name.</summary>
    public const int NoSuchProcess = 3;

    /// <summary>The process runs no PriorityAsync scheduler (or is not a .NET process with a diagnostics port).</summary>
    public const int NotPriorityAsync = 4;

    /// <summary>The process's diagnostics port could not be opened (permissions, diagnostics disabled, a stale port).</summary>
    public const int PortUnavailable = 5;

    /// <summary>The process exited while the inspector was attached.</summary>
    public const int TargetExited = 6;

    /// <summary>Several processes have that name: give a process id.</summary>
    public const int AmbiguousName = 7;
}
