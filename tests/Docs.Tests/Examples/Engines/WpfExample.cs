// begin-snippet: host-driven-wpf
// Needs: WPF, in a net10.0-windows project with <UseWPF>true</UseWPF> (compiled here against stand-ins of its types).
using System;
using System.Windows;
using System.Windows.Threading;
using PriorityAsync;

public partial class MainWindow : Window
{
    private readonly PriorityContextDriver _continuations;

    public MainWindow()
    {
        _continuations = PriorityContext.AttachToCurrentThread(new PriorityContextOptions { Levels = 3 }, workAvailable: ScheduleDrain);
        Closed += (_, _) => _continuations.Dispose();
    }

    // Any thread: a drain at ApplicationIdle priority runs after the dispatcher's input and rendering.
    private void ScheduleDrain() => Dispatcher.InvokeAsync(Drain, DispatcherPriority.ApplicationIdle);

    private void Drain()
    {
        if (!_continuations.IsDraining && _continuations.Drain(TimeSpan.FromMilliseconds(8)).WorkRemains)
        {
            ScheduleDrain();
        }
    }

    // WPF makes its own context current for every operation it runs: hand work over explicitly.
    private async void OnRefreshClicked(object sender, RoutedEventArgs e)
    {
        await _continuations.Context.Prioritize(2); // from here on, this method's awaits come back at level 2
        // ...
    }
}
// end-snippet
