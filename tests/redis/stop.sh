#!/usr/bin/env bash
# Stops the server start.sh started and removes its directory. Safe to call twice or when start.sh failed half-way.
#   tests/redis/stop.sh [directory]     (default: $PRIORITYASYNC_REDIS_DATA)
set -uo pipefail

DIR="${1:-${PRIORITYASYNC_REDIS_DATA:-}}"
if [[ -z "$DIR" ]]; then
  echo "redis: no server to stop (PRIORITYASYNC_REDIS_DATA is not set)" >&2
  exit 0
fi
case "$DIR" in
  */priorityasync-redis.*) ;;
  *) echo "redis: refusing to remove '$DIR': not a directory start.sh made" >&2; exit 1 ;;
esac

if [[ ! -d "$DIR" ]]; then
  echo "redis: $DIR is gone already; nothing to stop" >&2
  exit 0
fi
if [[ -f "$DIR/redis.pid" ]]; then
  PID=$(cat "$DIR/redis.pid")
  # SIGTERM: the server finishes the append-only file and exits; wait for it (at most 30 s), then make sure.
  if kill "$PID" 2>/dev/null; then
    for _ in $(seq 1 300); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PID" 2>/dev/null || true
  fi
fi
rm -rf -- "$DIR"
echo "redis: stopped and removed $DIR" >&2
