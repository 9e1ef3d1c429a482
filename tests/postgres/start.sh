#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests: a temporary directory, a loopback port, password (SCRAM) authentication
# on 127.0.0.1 only, a role and a database "priorityasync". Installs PostgreSQL from Debian's packages when initdb is missing
# (as root only). The server refuses to run as root, so as root initdb and pg_ctl run as the "postgres" user through runuser.
#
# Prints shell assignments on stdout (everything else goes to stderr), so that a caller can take them into its environment:
#   eval "$(tests/postgres/start.sh)"
#   trap 'tests/postgres/stop.sh' EXIT
#     PRIORITYASYNC_POSTGRES       the Npgsql connection string the tests read
#     PRIORITYASYNC_POSTGRES_DATA  the cluster's directory, which stop.sh stops and removes
#
# Environment (optional): PRIORITYASYNC_POSTGRES_PORT (first port tried, default 55432; the next free one is taken),
# PRIORITYASYNC_POSTGRES_PASSWORD (default: random).
set -euo pipefail

log() { echo "postgres: $*" >&2; }

find_bin() {
  local name=$1 found
  if found=$(command -v "$name" 2>/dev/null); then echo "$found"; return 0; fi
  # Debian keeps the server binaries off PATH, one directory per major version: take the newest.
  found=$(ls -1d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)
  [[ -n "$found" ]] && echo "$found"
}

if ! INITDB=$(find_bin initdb); then
  if [[ $(id -u) -ne 0 ]]; then
    log "initdb not found; install PostgreSQL (as root: apt-get install -y postgresql)"
    exit 1
  fi
  log "initdb not found: installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q postgresql >&2
  INITDB=$(find_bin initdb) || { log "initdb still not found after installing postgresql"; exit 1; }
fi
BIN=$(dirname "$(readlink -f "$INITDB")")
PG_CTL="$BIN/pg_ctl"
PSQL=$(find_bin psql || echo "$BIN/psql")

# As root, run the server's tools as "postgres" (the server refuses root); as anyone else, run them directly.
if [[ $(id -u) -eq 0 ]]; then
  as_server() { runuser -u postgres -- "$@"; }
  OWNER=postgres
else
  as_server() { "$@"; }
  OWNER=$(id -un)
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/priorityasync-pg.XXXXXX")
# On any failure from here on, leave nothing behind: stop the server if it started, remove the directory.
cleanup_on_failure() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    if [[ -f "$DIR/data/postmaster.pid" ]]; then as_server "$PG_CTL" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf -- "$DIR"
  fi
}
trap cleanup_on_failure EXIT
chmod 700 "$DIR"
chown "$OWNER" "$DIR"
PASSWORD="${PRIORITYASYNC_POSTGRES_PASSWORD:-$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')}"
printf '%s\n' "$PASSWORD" > "$DIR/pwfile"
chown "$OWNER" "$DIR/pwfile"
chmod 600 "$DIR/pwfile"

# Local (socket) connections: trust, for this script's own setup; TCP: SCRAM, and only 127.0.0.1 listens.
as_server "$INITDB" -D "$DIR/data" -U postgres --pwfile="$DIR/pwfile" --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; log "initdb failed"; exit 1; }
rm -f "$DIR/pwfile"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

PORT="${PRIORITYASYNC_POSTGRES_PORT:-55432}"
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || (( PORT < 1024 || PORT > 65500 )); then
  log "PRIORITYASYNC_POSTGRES_PORT is '$PORT'; expected a port from 1024 to 65500"
  exit 2
fi
started=false
for _ in $(seq 1 20); do
  if ! port_in_use "$PORT"; then
    # The socket lives in the cluster's directory, so concurrent clusters never share /var/run/postgresql.
    if as_server "$PG_CTL" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c max_connections=200 -c fsync=off" \
        start >&2; then
      started=true
      break
    fi
    # Lost a race for the port with another process: try the next one.
    log "pg_ctl start on port $PORT failed; trying the next port"
    tail -n 5 "$DIR/server.log" >&2 || true
  fi
  PORT=$((PORT + 1))
done
if [[ $started != true ]]; then
  tail -n 20 "$DIR/server.log" >&2 || true
  log "could not start a server"
  exit 1
fi

as_server "$PSQL" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >&2 <<SQL
CREATE ROLE priorityasync LOGIN PASSWORD '$PASSWORD';
CREATE DATABASE priorityasync OWNER priorityasync;
SQL

log "PostgreSQL $("$PSQL" --version | awk '{print $3}') on 127.0.0.1:$PORT, database priorityasync, directory $DIR"
echo "export PRIORITYASYNC_POSTGRES='Host=127.0.0.1;Port=$PORT;Database=priorityasync;Username=priorityasync;Password=$PASSWORD'"
echo "export PRIORITYASYNC_POSTGRES_DATA='$DIR'"
