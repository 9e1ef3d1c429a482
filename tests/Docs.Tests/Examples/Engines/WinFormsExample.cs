// begin-snippet: host-driven-winforms
// Needs: Windows Forms, in a net10.0-windows project with <UseWindowsForms>true</UseWindowsForms> (compiled here against stand-ins).
using System;
using System.Threading;
using System.Windows.Forms;
using PriorityAsync;

public class MainForm : Form
{
    private readonly SynchronizationContext _messageLoop;
    private readonly PriorityContextDriver _continuations;

    public MainForm()
    {
        _messageLoop = SynchronizationContext.Current!; // WinForms' own, installed when the form (a control) was created
        _continuations = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3 }, workAvailable: Wake);
        Application.Idle += OnIdle; // raised each time the message queue has emptied: after input, never before it
    }

    // Any thread: an empty message; once WinForms has handled it (and the input queued before it), Idle is raised.
    private void Wake() => _messageLoop.Post(static _ => { }, null);

    private void OnIdle(object? sender, EventArgs e)
    {
        if (!_continuations.IsDraining && _continuations.Drain(TimeSpan.FromMilliseconds(8)).WorkRemains)
        {
            Wake(); // more is ready: come back once the input that arrived meanwhile is handled
        }
    }

    protected override void OnFormClosed(FormClosedEventArgs e)
    {
        Application.Idle -= OnIdle;
        _continuations.Dispose(); // the thread gets WinForms' context back
        base.OnFormClosed(e);
    }
}
// end-snippet
