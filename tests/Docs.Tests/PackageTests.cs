using System.IO;
using System.IO.Compression;
using System.Reflection.Metadata;
using System.Xml.Linq;
using Snippets;

namespace Docs.Tests;

/// <summary>
/// The packages as a user gets them: packed as CI packs them (CI=true), and as a developer packs a local change (a plain
/// <c>dotnet pack</c>: no CI variable, the default configuration), then opened. The nuspec leads back to the source (repository URL
/// and commit, project URL), the icon and readme are in, the DLLs and the symbols package's PDBs hold no build-machine path, every
/// source is embedded in the PDB byte for byte, and the version comes from git:
/// distinct for each commit, also in a shallow clone.
/// </summary>
[Collection(PackCollection.Name)]
public sealed class PackageTests : IDisposable
{
    // The custom debug information kind of an embedded source (Portable PDB specification).
    private static readonly Guid s_embeddedSource = new("0E8A571B-6926-466E-B4AD-8AB04611F5FE");

    // The variables that make a build a CI build (Directory.Build.props); a developer's pack has none of them.
    private static readonly string[] s_ciVariables = ["CI", "TF_BUILD", "GITHUB_ACTIONS"];

    private readonly string _root = Repository.FindRoot(AppContext.BaseDirectory);
    private readonly string _scratch = Directory.CreateTempSubdirectory("priorityasync-pack-").FullName;
    private readonly List<string> _cleanUp = [];

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Pack_ThePackages_CarryTheirSourceIconReadmeAndAPortableSymbolsPackage(bool ci)
    {
        string output = Path.Combine(_scratch, "packages");
        // Inside the repository (artifacts/ is ignored by git): the paths are mapped below the repository root, and the build's
        // generated files (obj) must be below it too, as they are in a normal build.
        string artifacts = Path.Combine(_root, "artifacts", "docs-tests", Path.GetFileName(_scratch));
        _cleanUp.Add(artifacts);
        // The packages in one pack (a solution filter of them): one restore, and the core library built once for all.
        // --artifacts-path: the build lands in its own folder, never in the projects' bin and obj.
        string packages = Path.Combine(_scratch, "packages.slnf");
        File.WriteAllText(packages, $$"""
            { "solution": { "path": {{System.Text.Json.JsonSerializer.Serialize(Path.Combine(_root, "PriorityAsync.sln"))}},
                            "projects": [ "src/PriorityAsync/PriorityAsync.csproj", "src/PriorityAsync.Hosting/PriorityAsync.Hosting.csproj",
                                          "src/PriorityAsync.MassTransit/PriorityAsync.MassTransit.csproj" ] } }
            """);
        // RunAnalyzers=false: this build is here for what it packs, and analyzers add nothing to the package (source generators
        // still run); the suite's own build and CI's Release build analyze the same code. Saves about a fifth of the pack's time.
        string[] pack = ["pack", packages, $"-p:PackageOutputPath={output}", "--artifacts-path", artifacts, "-p:RunAnalyzers=false"];
        if (ci)
        {
            await Processes.RunAsync(_root, "dotnet", [.. pack, "-c", "Release", "-p:CI=true"]);
        }
        else
        {
            // The README's flow for trying a local change: no configuration given (pack's default, Release) and no CI variable, also
            // when this test itself runs on CI.
            await Processes.RunAsync(_root, s_ciVariables, "dotnet", pack);
        }

        string commit = (await Processes.RunAsync(_root, "git", "rev-parse", "HEAD")).Trim();
        XElement props = XElement.Load(Path.Combine(_root, "Directory.Build.props"));
        string repositoryUrl = props.Descendants("RepositoryUrl").Single().Value;
        string projectUrl = props.Descendants("PackageProjectUrl").Single().Value;

        foreach (string id in new[] { "PriorityAsync", "PriorityAsync.Hosting", "PriorityAsync.MassTransit" })
        {
            string nupkg = Directory.GetFiles(output, $"{id}.0*.nupkg").Should().ContainSingle().Subject;
            string version = Path.GetFileNameWithoutExtension(nupkg)[(id.Length + 1)..];
            version.Should().MatchRegex(@"^\d+\.\d+\.\d+(-alpha\.0\.\d+\.g[0-9a-f]{10})?$");
            if (version.Contains('-', StringComparison.Ordinal))
            {
                version.Should().EndWith(".g" + commit[..10], "a pre-release carries the commit it was packed from");
            }

            using ZipArchive package = ZipFile.OpenRead(nupkg);
            XElement metadata = Nuspec(package, id);
            Element(metadata, "version").Value.Should().Be(version);
            Element(metadata, "projectUrl").Value.Should().Be(projectUrl);
            XElement repository = Element(metadata, "repository");
            repository.Attribute("type")!.Value.Should().Be("git");
            repository.Attribute("url")!.Value.Should().Be(repositoryUrl);
            repository.Attribute("commit")!.Value.Should().Be(commit);
            Element(metadata, "readme").Value.Should().Be("PACKAGE.md");
            Element(metadata, "license").Value.Should().Be("MIT");
            Element(metadata, "icon").Value.Should().Be("icon.png");
            using (Stream icon = package.GetEntry("icon.png")!.Open())
            {
                var signature = new byte[8];
                icon.ReadExactly(signature);
                signature.Should().Equal([0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A], "the icon is a PNG");
            }

            package.GetEntry($"lib/net10.0/{id}.dll").Should().NotBeNull();
            package.GetEntry($"lib/net10.0/{id}.pdb").Should().BeNull("the symbols go in the .snupkg");
            if (id != "PriorityAsync")
            {
                metadata.Descendants(metadata.Name.Namespace + "dependency").Single(d => d.Attribute("id")!.Value == "PriorityAsync")
                    .Attribute("version")!.Value.Should().Be(version, "the packages of one commit go together");
            }

            if (id == "PriorityAsync.MassTransit")
            {
                metadata.Descendants(metadata.Name.Namespace + "dependency").Single(d => d.Attribute("id")!.Value == "MassTransit")
                    .Attribute("version")!.Value.Should().Be("8.5.12", "MassTransit 9 and newer carry a paid licence: the package asks for the 8.5 line");
            }

            string snupkg = Path.ChangeExtension(nupkg, ".snupkg");
            File.Exists(snupkg).Should().BeTrue();
            using ZipArchive symbols = ZipFile.OpenRead(snupkg);
            CheckPdb(symbols.GetEntry($"lib/net10.0/{id}.pdb")!, id);
            foreach (ZipArchiveEntry assembly in package.Entries.Where(e => e.FullName.EndsWith(".dll", StringComparison.Ordinal)))
            {
                // The DLLs name their PDB (the debug directory): mapped too, for the library and for the analyzers it carries.
                CheckNoLocalPath(Read(assembly), assembly.FullName);
            }
        }
    }

    [Fact]
    public async Task Version_EachCommitAndAShallowCloneWithoutTags_PacksADistinctVersion()
    {
        string clone = Path.Combine(_scratch, "clone");
        await Processes.RunAsync(_scratch, "git", "clone", "--quiet", "--no-tags", _root, clone);
        string first = await PackageVersionAsync(clone);

        await Processes.RunAsync(clone, "git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "--quiet", "--allow-empty", "-m", "another commit");
        string shallow = Path.Combine(_scratch, "shallow");
        await Processes.RunAsync(_scratch, "git", "clone", "--quiet", "--depth", "1", "--no-tags", new Uri(clone).AbsoluteUri, shallow);

        // The two builds of the same commit read separate clones: run them at once.
        Task<string> secondVersion = PackageVersionAsync(clone);
        Task<string> shallowVersion = PackageVersionAsync(shallow);
        string second = await secondVersion;
        string fromShallow = await shallowVersion;

        string head = (await Processes.RunAsync(clone, "git", "rev-parse", "--short=10", "HEAD")).Trim();
        first.Should().MatchRegex(@"^0\.1\.0-alpha\.0\.\d+\.g[0-9a-f]{10}$", "without tags, every commit is a pre-release of 0.1.0");
        second.Should().NotBe(first).And.EndWith(".g" + head);
        fromShallow.Should().EndWith(".g" + head, "a shallow clone cannot count the height, but the commit still tells versions apart");
    }

    public void Dispose()
    {
        foreach (string folder in _cleanUp.Append(_scratch))
        {
            try
            {
                Directory.Delete(folder, recursive: true);
            }
            catch (IOException)
            {
                // A build server may still hold a file for a moment: what is left is in a temporary or an ignored folder.
            }
        }
    }

    private static async Task<string> PackageVersionAsync(string repository)
    {
        string output = await Processes.RunAsync(repository, "dotnet", "msbuild", "-restore", "-nologo", "src/PriorityAsync/PriorityAsync.csproj",
            "-t:MinVer", "-getProperty:PackageVersion");
        return output.Trim().Split('\n')[^1].Trim();
    }

    private static XElement Element(XElement metadata, string name) =>
        metadata.Element(metadata.Name.Namespace + name) ?? throw new InvalidOperationException($"The nuspec has no <{name}>.");

    private static XElement Nuspec(ZipArchive package, string id)
    {
        using Stream stream = package.GetEntry($"{id}.nuspec")!.Open();
        XElement nuspec = XElement.Load(stream);
        return nuspec.Element(nuspec.Name.Namespace + "metadata")!;
    }

    // Every document is under /_/ (the path map), its source is embedded (the same bytes as the file in the repository, which is
    // what a debugger shows for it), and no string in the PDB is a path of this machine.
    private void CheckPdb(ZipArchiveEntry entry, string id)
    {
        byte[] bytes = Read(entry);
        CheckNoLocalPath(bytes, entry.FullName);
        using MetadataReaderProvider provider = MetadataReaderProvider.FromPortablePdbStream(new MemoryStream(bytes));
        MetadataReader pdb = provider.GetMetadataReader();
        var documents = pdb.Documents.Select(handle => (Handle: handle, Name: pdb.GetString(pdb.GetDocument(handle).Name))).ToList();
        documents.Should().NotBeEmpty();
        documents.Select(d => d.Name).Should().OnlyContain(name => name.StartsWith("/_/", StringComparison.Ordinal), "every path is mapped to /_/");
        documents.Where(d => d.Name.EndsWith(".cs", StringComparison.Ordinal) && d.Name.Contains($"/_/src/{id}/", StringComparison.Ordinal))
            .Should().NotBeEmpty();
        foreach ((DocumentHandle handle, string name) in documents)
        {
            BlobHandle source = pdb.GetCustomDebugInformation(handle).Select(pdb.GetCustomDebugInformation)
                .Where(information => pdb.GetGuid(information.Kind) == s_embeddedSource).Select(information => information.Value).SingleOrDefault();
            source.IsNil.Should().BeFalse($"{name}'s source is embedded in the PDB");
            if (name.StartsWith("/_/src/", StringComparison.Ordinal))
            {
                // (Generated files, under the artifacts folder, need not be on disk.)
                EmbeddedSource(pdb.GetBlobBytes(source)).Should().Equal(File.ReadAllBytes(Path.Combine(_root, name["/_/".Length..])),
                    $"{name} is embedded as the file the package was built from");
            }
        }
    }

    private void CheckNoLocalPath(byte[] bytes, string file)
    {
        string raw = System.Text.Encoding.UTF8.GetString(bytes);
        raw.Should().NotContain(_root, $"{file} holds no path of the build machine");
        raw.Should().NotContain(_scratch, file);
        raw.Should().NotContain(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile) + "/", file);
    }

    private static byte[] Read(ZipArchiveEntry entry)
    {
        using var bytes = new MemoryStream();
        using (Stream stream = entry.Open())
        {
            stream.CopyTo(bytes);
        }

        return bytes.ToArray();
    }

    // An embedded source blob (Portable PDB specification): the uncompressed size as an int32, 0 when the text follows as is,
    // otherwise the text deflated.
    private static byte[] EmbeddedSource(byte[] blob)
    {
        int size = BitConverter.ToInt32(blob, 0);
        if (size == 0)
        {
            return blob[4..];
        }

        using var deflate = new DeflateStream(new MemoryStream(blob, 4, blob.Length - 4), CompressionMode.Decompress);
        var text = new byte[size];
        deflate.ReadExactly(text);
        return text;
    }
}
