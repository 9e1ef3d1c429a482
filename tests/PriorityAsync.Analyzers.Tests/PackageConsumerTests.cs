using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Text;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>
/// The analyzers reach users through the packages: both packages packed as this run built them, then a new project that references
/// only one of them is built, and its Task.Delay inside a priority worker must draw PA0001. (NuGet drops a dependency's analyzers when
/// the dependency says exclude="Analyzers", as PriorityAsync.Hosting's once did.)
/// </summary>
[Trait("Category", "Package")]
public sealed class PackageConsumerTests : IClassFixture<PackageConsumerTests.PackedFeed>
{
    private readonly PackedFeed _feed;

    public PackageConsumerTests(PackedFeed feed) => _feed = feed;

    [Fact]
    public void PriorityAsyncAlone_TaskDelayInAWorkerLoop_ReportsPA0001()
    {
        string output = _feed.BuildConsumer("OnlyCore", "PriorityAsync", """
            using System;
            using System.Threading.Tasks;
            using PriorityAsync;

            await using var worker = new PriorityContextThread();
            await worker.Context.InvokeAsync(async () =>
            {
                await Task.Delay(10);
                Console.WriteLine(PriorityContext.CurrentLevel);
            });
            """);

        output.Should().MatchRegex(@"Program\.cs\(8,\d+\): warning PA0001:", output);
        output.Should().Contain("/docs/analyzers.md#pa0001-pool-timers-on-the-loop)", "the build prints the rule's help link after its message");
    }

    [Fact]
    public void PriorityAsyncHostingAlone_TaskDelayInAPriorityBackgroundService_ReportsPA0001()
    {
        string output = _feed.BuildConsumer("OnlyHosting", "PriorityAsync.Hosting", """
            using System.Threading;
            using System.Threading.Tasks;
            using PriorityAsync.Hosting;

            public sealed class Worker : PriorityBackgroundService
            {
                protected override async Task ExecuteAsync(CancellationToken stoppingToken)
                {
                    await Task.Delay(1000, stoppingToken);
                }
            }
            """, library: true);

        output.Should().MatchRegex(@"Program\.cs\(9,\d+\): warning PA0001:", output);
    }

    [Fact]
    public void DotnetFormat_OnePass_AppliesEveryFixOfPA0001AndPA0003()
    {
        // First in the file, so first in dotnet format's list: a diagnostic of each rule that has no fix. dotnet format asks the
        // fix provider for the fix of its first diagnostic, and hands that fix's equivalence key (none, here) to Fix All.
        _feed.CreateConsumer("Format", "PriorityAsync", """
            using System;
            using System.Threading;
            using System.Threading.Tasks;
            using PriorityAsync;

            Program? other = null;
            PriorityContext.Run(async () =>
            {
                using var timer = new Timer(_ => { }, null, 100, 100);
                other?.BarAsync();
                await Task.Delay(100);
                await Task.Delay(200).WaitAsync(TimeSpan.FromSeconds(1));
                _ = FooAsync();
                await TaskScope.RunAsync(async scope =>
                {
                    FooAsync();
                    await Task.Yield();
                });
            });

            static async Task FooAsync() => await Task.Yield();

            partial class Program
            {
                public Task BarAsync() => Task.CompletedTask;
            }
            """);

        string output = _feed.InConsumer("Format", "format", "analyzers", "--diagnostics", "PA0001", "PA0003", "--severity", "warn", "-v", "normal");

        output.Should().NotContain("Unable to fix", output);
        _feed.ConsumerProgram("Format").Should().Contain("""
                using var timer = new Timer(_ => { }, null, 100, 100);
                other?.BarAsync();
                await Priority.Delay(TimeSpan.FromMilliseconds(100));
                await Task.Delay(TimeSpan.FromMilliseconds(200), Priority.CurrentScheduler!.TimeProvider).WaitAsync(TimeSpan.FromSeconds(1), Priority.CurrentScheduler!.TimeProvider);
                Priority.Start(_ => FooAsync());
                await TaskScope.RunAsync(async scope =>
                {
                    scope.Start(_ => FooAsync());
            """);
    }

    /// <summary>Packs both packages once for the class, into a feed in a temporary folder that is deleted afterwards.</summary>
    public sealed class PackedFeed : IDisposable
    {
        // A version no real package has; restored into the consumers' own folder, so the machine's package cache never holds it.
        private const string Version = "0.0.0-consumertest";
        private static readonly TimeSpan s_processTimeout = TimeSpan.FromMinutes(5);

        private readonly string _root = Path.Combine(Path.GetTempPath(), "priorityasync-consumer-" + Guid.NewGuid().ToString("N"));

        public PackedFeed()
        {
            Directory.CreateDirectory(_root);
            string repository = FindRepository();
            string configuration = typeof(PackageConsumerTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
                .Single(a => a.Key == "Configuration").Value!;
            foreach (string project in new[] { "src/PriorityAsync/PriorityAsync.csproj", "src/PriorityAsync.Hosting/PriorityAsync.Hosting.csproj" })
            {
                Run(repository, "pack", Path.Combine(repository, project), "--no-build", "-c", configuration, "-o", Feed,
                    $"-p:Version={Version}", "-nologo");
            }
        }

        private string Feed => Path.Combine(_root, "feed");

        /// <summary>Creates a project that references <paramref name="package"/> alone, builds it, and returns the build's output.</summary>
        public string BuildConsumer(string name, string package, string program, bool library = false)
        {
            string directory = CreateConsumer(name, package, program, library);
            return Run(directory, "build", "-nologo", "-clp:NoSummary");
        }

        /// <summary>Runs <c>dotnet</c> with <paramref name="arguments"/> in the consumer <paramref name="name"/>'s folder.</summary>
        public string InConsumer(string name, params string[] arguments) => Run(Path.Combine(_root, name), arguments);

        /// <summary>The consumer <paramref name="name"/>'s Program.cs as it is now.</summary>
        public string ConsumerProgram(string name) => File.ReadAllText(Path.Combine(_root, name, "Program.cs"));

        /// <summary>Creates a project that references <paramref name="package"/> alone; returns its folder.</summary>
        public string CreateConsumer(string name, string package, string program, bool library = false)
        {
            string directory = Path.Combine(_root, name);
            Directory.CreateDirectory(directory);
            string globalPackages = Environment.GetEnvironmentVariable("NUGET_PACKAGES")
                ?? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
            File.WriteAllText(Path.Combine(directory, name + ".csproj"), $"""
                <Project Sdk="Microsoft.NET.Sdk">
                  <PropertyGroup>
                    <OutputType>{(library ? "Library" : "Exe")}</OutputType>
                    <TargetFramework>net10.0</TargetFramework>
                    <Nullable>enable</Nullable>
                    <RestorePackagesPath>{Path.Combine(directory, "packages")}</RestorePackagesPath>
                    <RestoreAdditionalProjectFallbackFolders>{globalPackages}</RestoreAdditionalProjectFallbackFolders>
                  </PropertyGroup>
                  <ItemGroup>
                    <PackageReference Include="{package}" Version="{Version}" />
                  </ItemGroup>
                </Project>
                """);
            // The machine's sources stay (no <clear/>): the library's own dependencies come from them, or from the fallback folder.
            File.WriteAllText(Path.Combine(directory, "nuget.config"), $"""
                <?xml version="1.0" encoding="utf-8"?>
                <configuration>
                  <packageSources>
                    <add key="consumer-test-feed" value="{Feed}" />
                  </packageSources>
                </configuration>
                """);
            File.WriteAllText(Path.Combine(directory, "Program.cs"), program);
            return directory;
        }

        public void Dispose()
        {
            try
            {
                Directory.Delete(_root, recursive: true);
            }
            catch (IOException)
            {
                // A build server may still hold a file for a moment; the folder is under the temporary path.
            }
        }

        private static string FindRepository()
        {
            for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
            {
                if (File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
                {
                    return directory.FullName;
                }
            }

            throw new InvalidOperationException($"No PriorityAsync.sln above {AppContext.BaseDirectory}.");
        }

        private static string Run(string workingDirectory, params string[] arguments)
        {
            var start = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet")
            {
                WorkingDirectory = workingDirectory,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (string argument in arguments)
            {
                start.ArgumentList.Add(argument);
            }

            // The test host's MSBuild settings would steer the nested build to the test run's SDK internals.
            foreach (string variable in new[] { "MSBuildSDKsPath", "MSBUILD_EXE_PATH", "MSBuildExtensionsPath", "MSBuildLoadMicrosoftTargetsReadOnly" })
            {
                start.Environment.Remove(variable);
            }

            start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
            start.Environment["DOTNET_NOLOGO"] = "1";
            start.Environment["MSBUILDDISABLENODEREUSE"] = "1";

            using Process process = Process.Start(start)!;
            var output = new StringBuilder();
            process.OutputDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
            process.ErrorDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            if (!process.WaitForExit(s_processTimeout))
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"dotnet {string.Join(' ', arguments)} did not finish within {s_processTimeout}:\n{output}");
            }

            process.WaitForExit();
            string text;
            lock (output)
            {
                text = output.ToString();
            }

            if (process.ExitCode != 0)
            {
                throw new InvalidOperationException($"dotnet {string.Join(' ', arguments)} exited with {process.ExitCode}:\n{text}");
            }

            return text;
        }
    }
}
