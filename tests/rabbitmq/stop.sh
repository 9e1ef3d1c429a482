#!/usr/bin/env bash
# Stops the node start.sh started, and its epmd, and removes its directory. Safe to call twice or when start.sh failed half-way.
#   tests/rabbitmq/stop.sh [directory]     (default: $PRIORITYASYNC_RABBITMQ_DATA)
set -uo pipefail

DIR="${1:-${PRIORITYASYNC_RABBITMQ_DATA:-}}"
if [[ -z "$DIR" ]]; then
  echo "rabbitmq: no node to stop (PRIORITYASYNC_RABBITMQ_DATA is not set)" >&2
  exit 0
fi
case "$DIR" in
  */priorityasync-rabbitmq.*) ;;
  *) echo "rabbitmq: refusing to remove '$DIR': not a directory start.sh made" >&2; exit 1 ;;
esac

if [[ ! -d "$DIR" ]]; then
  echo "rabbitmq: $DIR is gone already; nothing to stop" >&2
  exit 0
fi
if [[ -f "$DIR/rabbitmq.pid" ]]; then
  PID=$(cat "$DIR/rabbitmq.pid")
  # SIGTERM: the node stops in order (it closes its connections and writes its queues); wait for it (at most 30 s), then make sure.
  if kill "$PID" 2>/dev/null; then
    for _ in $(seq 1 300); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PID" 2>/dev/null || true
  fi
fi
# The node's own epmd (start.sh gave it a port of its own): no other node is registered with it, so it may go.
if [[ -f "$DIR/epmd.port" ]]; then
  ERL_EPMD_PORT=$(cat "$DIR/epmd.port") epmd -kill >/dev/null 2>&1 || true
fi
rm -rf -- "$DIR"
echo "rabbitmq: stopped and removed $DIR" >&2
