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
# The node's own epmd (start.sh gave it a port of its own). epmd refuses -kill while a name is registered: a rabbitmqctl still
# running (a test that gave up on it) unregisters when it ends, so retry for a while; then stop it by its process id, unless another
# throwaway node shares it (two start.sh runs that raced for the port).
if [[ -f "$DIR/epmd.port" ]]; then
  EPMD_PORT=$(cat "$DIR/epmd.port")
  for _ in $(seq 1 50); do
    ERL_EPMD_PORT=$EPMD_PORT epmd -kill >/dev/null 2>&1 || true
    (exec 3<>"/dev/tcp/127.0.0.1/$EPMD_PORT") 2>/dev/null || break
    sleep 0.2
  done
  if (exec 3<>"/dev/tcp/127.0.0.1/$EPMD_PORT") 2>/dev/null \
      && ! ERL_EPMD_PORT=$EPMD_PORT epmd -names 2>/dev/null | grep -q '^name priorityasync-'; then
    EPMD_PID=$(ss -Htlnp "sport = :$EPMD_PORT" 2>/dev/null | grep -o 'epmd",pid=[0-9]*' | head -n 1 | cut -d= -f2)
    [[ -n "$EPMD_PID" ]] && kill "$EPMD_PID" 2>/dev/null
  fi
fi
rm -rf -- "$DIR"
echo "rabbitmq: stopped and removed $DIR" >&2
