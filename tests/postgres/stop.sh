#!/usr/bin/env bash
# Stops the cluster start.sh started and removes its directory. Safe to call twice or when start.sh failed half-way.
#   tests/postgres/stop.sh [directory]     (default: $PRIORITYASYNC_POSTGRES_DATA)
set -uo pipefail

DIR="${1:-${PRIORITYASYNC_POSTGRES_DATA:-}}"
if [[ -z "$DIR" ]]; then
  echo "postgres: no cluster to stop (PRIORITYASYNC_POSTGRES_DATA is not set)" >&2
  exit 0
fi
case "$DIR" in
  */priorityasync-pg.*) ;;
  *) echo "postgres: refusing to remove '$DIR': not a directory start.sh made" >&2; exit 1 ;;
esac

if [[ ! -d "$DIR" ]]; then
  echo "postgres: $DIR is gone already; nothing to stop" >&2
  exit 0
fi
if [[ -f "$DIR/data/postmaster.pid" ]]; then
  PG_CTL=$(command -v pg_ctl 2>/dev/null || ls -1d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1)
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$PG_CTL" -D "$DIR/data" -m fast -w -t 60 stop >&2 || echo "postgres: pg_ctl stop failed" >&2
  else
    "$PG_CTL" -D "$DIR/data" -m fast -w -t 60 stop >&2 || echo "postgres: pg_ctl stop failed" >&2
  fi
fi
rm -rf -- "$DIR"
echo "postgres: stopped and removed $DIR" >&2
