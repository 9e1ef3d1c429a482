// Copies the compiled snippet regions into the docs (see README.md here):
//   dotnet run --project tools/Snippets              rewrite every stale snippet block in place
//   dotnet run --project tools/Snippets -- --check   only report: exit code 1 when a block is stale or a problem is found
using System;
using System.Collections.Generic;
using System.IO;
using Snippets;

bool check = args is ["--check"];
if (args.Length > 0 && !check)
{
    Console.Error.WriteLine("Snippets: the only option is --check (report stale blocks, change nothing).");
    return 2;
}

string root = Repository.FindRoot(Directory.GetCurrentDirectory());
var problems = new List<string>();
IReadOnlyList<(string Path, string Text)> changed = Repository.Render(root, problems);
foreach ((string path, string text) in changed)
{
    if (check)
    {
        Console.WriteLine($"{path}: a snippet block differs from its source.");
    }
    else
    {
        File.WriteAllText(Path.Combine(root, path), text);
        Console.WriteLine($"{path}: updated.");
    }
}

foreach (string problem in problems)
{
    Console.Error.WriteLine(problem);
}

return problems.Count > 0 || (check && changed.Count > 0) ? 1 : 0;
