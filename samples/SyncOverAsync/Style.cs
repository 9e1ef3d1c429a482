namespace SyncOverAsync;

/// <summary>How the request handler waits for its backend call.</summary>
internal enum Style
{
    /// <summary><c>await backend.CallAsync()</c>: the thread is free while the call is out.</summary>
    Await,

    /// <summary><c>backend.CallAsync().Wait()</c>: sync over async, the thread blocks until the call is back.</summary>
    Wait,
}
