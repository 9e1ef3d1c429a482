#!/usr/bin/env bash
# Runs a command (by default the README's test command, `dotnet test`) beside N CPU-bound processes, then stops them: a test that
# holds only on an idle machine fails here, where it is written, instead of on a newcomer's busy laptop or a shared CI runner.
#
#   tests/under-load.sh                      # dotnet test beside 3 CPU-bound processes
#   tests/under-load.sh 5                    # beside 5
#   tests/under-load.sh 3 dotnet test tests/LeaseWorker.Tests/LeaseWorker.Tests.csproj --filter ScenarioTests
#
# Each CPU-bound process is a shell busy loop at normal priority (nice 0), as another build or test run would be. They are started
# before the command and stopped by process id when it ends, also on failure or Ctrl+C. The load average is printed before and
# after. The exit code is the command's.
set -euo pipefail

count=3
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  count=$1
  shift
fi

if [[ $# -eq 0 ]]; then
  set -- dotnet test
fi

if ((count > 64)); then
  echo "under-load: at most 64 CPU-bound processes (got $count)" >&2
  exit 2
fi

pids=()
stop_load() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  pids=()
}
trap stop_load EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < count; i++)); do
  bash -c 'while :; do :; done' &
  pids+=("$!")
done

echo "under-load: $count CPU-bound processes beside: $*; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start=$(date +%s)
status=0
"$@" || status=$?
echo "under-load: exit $status after $(($(date +%s) - start)) s beside $count CPU-bound processes; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit "$status"
