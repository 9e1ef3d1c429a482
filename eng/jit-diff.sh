#!/usr/bin/env bash
# Compares the machine code the JIT makes for the loop's hot methods in two builds of the library: main (or any commit) against the
# working tree. Fully optimized, without tiering or PGO, so the code is the same on every run and at any machine load: an identical
# listing is a hot path that did not change, whatever a timing would say on a busy machine.
#
#   eng/jit-diff.sh [commit] [method-pattern]      defaults: main, 'DrainReady ShouldYieldAt'
#
# Prints, per method, the size of the code on each side and the instructions that differ (addresses left out).
set -euo pipefail
base="${1:-main}"
methods="${2:-DrainReady ShouldYieldAt}"
root="$(git rev-parse --show-toplevel)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git -C "$root" archive "$base" | tar -x -C "$work" --one-top-level=base
dotnet build "$work/base/src/PriorityAsync/PriorityAsync.csproj" -c Release -o "$work/lib-base" > "$work/build-base.log"
dotnet build "$root/src/PriorityAsync/PriorityAsync.csproj" -c Release -o "$work/lib-tree" > "$work/build-tree.log"

mkdir -p "$work/probe"
cat > "$work/probe/probe.csproj" <<'XML'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework><ImplicitUsings>enable</ImplicitUsings></PropertyGroup>
  <ItemGroup><Reference Include="PriorityAsync"><HintPath>$(LibPath)</HintPath></Reference></ItemGroup>
</Project>
XML
cat > "$work/probe/Program.cs" <<'CS'
using PriorityAsync;
SendOrPostCallback noop = _ => { };
PriorityContext.Run(async () =>
{
    var level = PriorityContext.Current!.GetSynchronizationContext(0);
    for (int round = 0; round < 3; round++)
    {
        for (int i = 0; i < 1000; i++) level.Post(noop, null);
        await Task.Yield();
    }

    for (int i = 0; i < 1000; i++) await Priority.Checkpoint();
});
CS
dotnet build "$work/probe/probe.csproj" -c Release -p:LibPath="$work/lib-base/PriorityAsync.dll" -o "$work/out" > "$work/build-probe.log"

for side in base tree; do
  cp "$work/lib-$side/PriorityAsync.dll" "$work/out/PriorityAsync.dll"
  for method in $methods; do
    DOTNET_TieredCompilation=0 DOTNET_TieredPGO=0 DOTNET_JitDisasm="$method" DOTNET_JitStdOutFile="$work/$side-$method.asm" \
      dotnet "$work/out/probe.dll"
  done
done

# The instructions only: no addresses, no comments, no headers.
norm() { grep -v '^;' "$1" | sed -E 's/0x[0-9A-F]{8,}//g; s/;.*$//; s/[[:space:]]+$//' | grep -v '^$' || true; }
for method in $methods; do
  # One file per compiled method, in the order the JIT compiled them (the same on both sides).
  for side in base tree; do
    awk -v prefix="$work/$side-$method-" '/^; Assembly listing for method/ { n++ } n { print > (prefix n) }' "$work/$side-$method.asm"
  done

  n=1
  while [[ -f "$work/base-$method-$n" || -f "$work/tree-$method-$n" ]]; do
    echo "== $(grep -h -m1 'Assembly listing' "$work/tree-$method-$n" 2>/dev/null | sed 's/; Assembly listing for method //')"
    echo "   base: $(grep -h -m1 'Assembly listing' "$work/base-$method-$n" 2>/dev/null | sed 's/; Assembly listing for method //')"
    echo "   bytes of code: $(grep -h 'Total bytes' "$work/base-$method-$n" 2>/dev/null | grep -o '[0-9]*$') -> $(grep -h 'Total bytes' "$work/tree-$method-$n" 2>/dev/null | grep -o '[0-9]*$')"
    if diff <(norm "$work/base-$method-$n") <(norm "$work/tree-$method-$n") > "$work/diff.txt"; then
      echo "   identical instructions"
    else
      sed 's/^/   /' "$work/diff.txt"
    fi
    n=$((n + 1))
  done
done
