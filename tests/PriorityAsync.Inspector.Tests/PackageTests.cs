using System.Diagnostics;
using System.IO.Compression;
using System.Xml.Linq;

namespace PriorityAsync.Inspector.Tests;

/// <summary>The tool as users get it: packed as a .NET tool, installed from the package, run by its command name.</summary>
public sealed class PackageTests
{
    [Fact]
    public async Task Pack_Tool_InstallsAndRunsAsPrio()
    {
        string scratch = Directory.CreateTempSubdirectory("prio-pack-").FullName;
        try
        {
            string packages = Path.Combine(scratch, "packages");
            // The build this test project already made of the tool (its configuration): packing adds no compile to the suite's load.
            string configuration = Path.GetFileName(Path.GetDirectoryName(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar))!)!;
            await RunAsync(Root(), "dotnet", "pack", "src/PriorityAsync.Inspector/PriorityAsync.Inspector.csproj", "-o", packages, "-c", configuration, "--no-build");
            string nupkg = Directory.GetFiles(packages, "PriorityAsync.Inspector.*.nupkg").Should().ContainSingle(p => !p.EndsWith(".snupkg", StringComparison.Ordinal)).Subject;
            string version = Path.GetFileNameWithoutExtension(nupkg)["PriorityAsync.Inspector.".Length..];

            using (ZipArchive package = ZipFile.OpenRead(nupkg))
            {
                XElement nuspec = XElement.Load(package.Entries.Single(e => e.FullName.EndsWith(".nuspec", StringComparison.Ordinal)).Open());
                XNamespace ns = nuspec.Name.Namespace;
                nuspec.Descendants(ns + "packageType").Select(t => t.Attribute("name")!.Value).Should().Contain("DotnetTool");
                nuspec.Descendants(ns + "readme").Single().Value.Should().Be("PACKAGE.md");
                nuspec.Descendants(ns + "icon").Single().Value.Should().Be("icon.png");
                nuspec.Descendants(ns + "license").Single().Value.Should().Be("MIT");
                XElement settings = XElement.Load(package.Entries.Single(e => e.FullName.EndsWith("/DotnetToolSettings.xml", StringComparison.Ordinal)).Open());
                settings.Descendants("Command").Single().Attribute("Name")!.Value.Should().Be("prio");
                package.Entries.Should().Contain(e => e.FullName.EndsWith("/Microsoft.Diagnostics.NETCore.Client.dll", StringComparison.Ordinal));
            }

            string tools = Path.Combine(scratch, "tools");
            await RunAsync(scratch, "dotnet", "tool", "install", "PriorityAsync.Inspector", "--tool-path", tools, "--add-source", packages, "--version", version);
            string help = await RunAsync(scratch, Path.Combine(tools, "prio"), "--help");
            help.Should().StartWith("prio: the live inspector of PriorityAsync");
        }
        finally
        {
            Directory.Delete(scratch, recursive: true);
        }
    }

    private static string Root() => TestTarget.RepositoryRoot();

    private static async Task<string> RunAsync(string directory, string file, params string[] args)
    {
        var start = new ProcessStartInfo(file) { WorkingDirectory = directory, RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        using Process process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(5));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{file} {string.Join(' ', args)} did not end within 5 minutes.");
        }

        string text = await output;
        process.ExitCode.Should().Be(0, $"{file} {string.Join(' ', args)} failed: {text} {await error}");
        return text;
    }
}
