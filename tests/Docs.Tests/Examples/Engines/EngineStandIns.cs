// Stand-ins of the engines' types that the examples of docs/host-driven.md touch, and nothing more: the engines' packages cannot be had
// here, so these let the examples compile (a renamed PriorityAsync member breaks the build). They do not behave like the engines;
// nothing runs them.
#pragma warning disable CS0067 // events the examples subscribe to and nothing raises

namespace Godot
{
    public partial class Node
    {
        public virtual void _Ready()
        {
        }

        public virtual void _Process(double delta)
        {
        }

        public virtual void _ExitTree()
        {
        }
    }
}

namespace Microsoft.Xna.Framework
{
    public class GameTime
    {
    }

    public class Game : System.IDisposable
    {
        public void Dispose()
        {
            Dispose(true);
            System.GC.SuppressFinalize(this);
        }

        protected virtual void Initialize()
        {
        }

        protected virtual void Update(GameTime gameTime)
        {
        }

        protected virtual void Dispose(bool disposing)
        {
        }
    }
}

namespace System.Windows.Forms
{
    public static class Application
    {
        public static event EventHandler? Idle;
    }

    public class FormClosedEventArgs : EventArgs
    {
    }

    public class Form
    {
        protected virtual void OnFormClosed(FormClosedEventArgs e)
        {
        }
    }
}

namespace System.Windows
{
    public class RoutedEventArgs : EventArgs
    {
    }

    public class Window
    {
        public event EventHandler? Closed;

        public Threading.Dispatcher Dispatcher { get; } = new();
    }
}

namespace System.Windows.Threading
{
    public enum DispatcherPriority
    {
        ApplicationIdle = 2,
    }

    public sealed class DispatcherOperation
    {
    }

    public sealed class Dispatcher
    {
        public DispatcherOperation InvokeAsync(Action callback, DispatcherPriority priority) => new();
    }
}
