namespace PriorityAsync.Tests.Reliability.Model;

/// <summary>Interprets scripts with real async methods on a real <see cref="PriorityContext"/>, logging what the model logs.</summary>
/// <remarks>The log is touched only on the loop thread (scripts, inline Sends, the UnhandledException handler, cross-thread Sends
/// and hops all log from the loop); read it after the loop stopped.</remarks>
internal sealed class RealRunner
{
    private readonly PriorityContext _context;

    public RealRunner(PriorityContext context)
    {
        _context = context;
        context.UnhandledException += (_, e) =>
        {
            if (e.Exception is ScriptException script)
            {
                Log.Add($"{script.Id}:ex@{e.Level}");
                e.Handled = true;
            }
        };
    }

    public List<string> Log { get; } = new();

    /// <summary>The item a PostScript op posts; recognisable in WorkDropped as the state.</summary>
    public sealed record TopLevelItem(string Id, Op.PostScript Op);

    public static readonly SendOrPostCallback StartCallback = static state => ((Starter)state!).Start();

    public Starter CreateStarter(string id, Op.PostScript op) => new(this, new TopLevelItem(id, op));

    public sealed class Starter(RealRunner runner, TopLevelItem item)
    {
        public TopLevelItem Item => item;

        public void Start()
        {
            runner.Log.Add($"{item.Id}:start@{PriorityContext.CurrentLevel}");
            if (item.Op.AsyncVoidThatThrows)
            {
                runner.RunVoid(item.Op.Script, item.Id);
            }
            else
            {
#pragma warning disable PA0003 // the model runs async work as the system under test does; the runner observes it itself
                _ = runner.RunAsync(item.Op.Script, item.Id);
#pragma warning restore PA0003
            }
        }
    }

    private async void RunVoid(Script script, string id)
    {
        await RunAsync(script, id + "/c0");
        throw new ScriptException(id);
    }

    private async Task RunAsync(Script script, string id)
    {
        for (int index = 0; index < script.Steps.Count; index++)
        {
            switch (script.Steps[index])
            {
                case Step.Record:
                    Log.Add($"{id}:{index}@{PriorityContext.CurrentLevel}");
                    break;
                case Step.Yield:
                    await Priority.Yield();
                    break;
                case Step.Prioritize p:
                    await Priority.Prioritize(p.Level);
                    break;
                case Step.Post post:
                    string childId = $"{id}/p{index}";
                    Script child = post.Child;
                    _context.GetSynchronizationContext(post.Level).Post(
                        _ =>
                        {
                            Log.Add($"{childId}:start@{PriorityContext.CurrentLevel}");
                            _ = RunAsync(child, childId);
                        },
                        null);
                    break;
                case Step.SendInline send:
                    int i = index;
                    _context.GetSynchronizationContext(send.Level).Send(_ => Log.Add($"{id}:{i}@{PriorityContext.CurrentLevel}"), null);
                    break;
                case Step.Call call:
                    await RunAsync(call.Callee, $"{id}/c{index}");
                    break;
            }
        }
    }

    public sealed class ScriptException(string id) : Exception($"script {id} throws at its end (async void)")
    {
        public string Id { get; } = id;
    }
}
