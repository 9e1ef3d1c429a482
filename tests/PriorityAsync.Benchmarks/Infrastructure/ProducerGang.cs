using System;
using System.Threading;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// Long-lived producer threads, so a benchmark invocation does not pay for starting threads: <see cref="Run"/> releases the first
/// <c>count</c> producers, each runs the work with its index, and <see cref="Run"/> returns once they have all finished.
/// </summary>
internal sealed class ProducerGang : IDisposable
{
    private readonly Thread[] _threads;
    private readonly SemaphoreSlim[] _go;
    private readonly CountdownEvent _finished = new(0);
    private Action<int>? _work;
    private volatile bool _stopping;

    public ProducerGang(int size)
    {
        _threads = new Thread[size];
        _go = new SemaphoreSlim[size];
        for (int i = 0; i < size; i++)
        {
            int index = i;
            _go[i] = new SemaphoreSlim(0);
            _threads[i] = new Thread(() => Loop(index)) { IsBackground = true, Name = $"producer {i}" };
            _threads[i].Start();
        }
    }

    public void Run(int count, Action<int> work)
    {
        _work = work;
        _finished.Reset(count);
        for (int i = 0; i < count; i++)
        {
            _go[i].Release();
        }

        _finished.Wait();
    }

    public void Dispose()
    {
        _stopping = true;
        foreach (SemaphoreSlim go in _go)
        {
            go.Release();
        }

        foreach (Thread thread in _threads)
        {
            thread.Join();
        }
    }

    private void Loop(int index)
    {
        while (true)
        {
            _go[index].Wait();
            if (_stopping)
            {
                return;
            }

            _work!(index);
            _finished.Signal();
        }
    }
}
