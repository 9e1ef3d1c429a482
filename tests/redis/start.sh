#!/usr/bin/env bash
# Starts a throwaway Redis server for the tests: a temporary directory, a loopback port, a password, and an append-only file
# synced on every write (appendonly yes, appendfsync always: a write the server has answered survives a crash or a restart).
# Installs redis-server from Debian's packages when it is missing (as root only).
#
# Prints shell assignments on stdout (everything else goes to stderr), so that a caller can take them into its environment:
#   eval "$(tests/redis/start.sh)"
#   trap 'tests/redis/stop.sh' EXIT
#     PRIORITYASYNC_REDIS       the StackExchange.Redis configuration string the tests and BrokerWorker read
#     PRIORITYASYNC_REDIS_DATA  the server's directory (its redis.conf, append-only file and log), which stop.sh stops and removes
#
# Environment (optional): PRIORITYASYNC_REDIS_PORT (first port tried, default 56379; the next free one is taken),
# PRIORITYASYNC_REDIS_PASSWORD (default: random).
set -euo pipefail

log() { echo "redis: $*" >&2; }

if ! SERVER=$(command -v redis-server 2>/dev/null); then
  if [[ $(id -u) -ne 0 ]]; then
    log "redis-server not found; install it (as root: apt-get install -y redis-server)"
    exit 1
  fi
  log "redis-server not found: installing it from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q redis-server >&2
  SERVER=$(command -v redis-server) || { log "redis-server still not found after installing it"; exit 1; }
fi
CLI=$(command -v redis-cli || echo "$(dirname "$SERVER")/redis-cli")

DIR=$(mktemp -d "${TMPDIR:-/tmp}/priorityasync-redis.XXXXXX")
# On any failure from here on, leave nothing behind: stop the server if it started, remove the directory.
cleanup_on_failure() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    if [[ -f "$DIR/redis.pid" ]]; then kill -9 "$(cat "$DIR/redis.pid")" 2>/dev/null || true; fi
    rm -rf -- "$DIR"
  fi
}
trap cleanup_on_failure EXIT
chmod 700 "$DIR"
PASSWORD="${PRIORITYASYNC_REDIS_PASSWORD:-$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')}"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

PORT="${PRIORITYASYNC_REDIS_PORT:-56379}"
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || (( PORT < 1024 || PORT > 65500 )); then
  log "PRIORITYASYNC_REDIS_PORT is '$PORT'; expected a port from 1024 to 65500"
  exit 2
fi

started=false
for _ in $(seq 1 20); do
  if ! port_in_use "$PORT"; then
    # The whole configuration in one file, so that a test can restart the server exactly as it was (redis-server redis.conf).
    cat > "$DIR/redis.conf" <<CONF
bind 127.0.0.1
port $PORT
protected-mode yes
requirepass $PASSWORD
daemonize yes
pidfile $DIR/redis.pid
logfile $DIR/server.log
dir $DIR
appendonly yes
appendfsync always
save ""
CONF
    chmod 600 "$DIR/redis.conf"
    if "$SERVER" "$DIR/redis.conf" >&2; then
      for _ in $(seq 1 100); do
        if REDISCLI_AUTH="$PASSWORD" "$CLI" -h 127.0.0.1 -p "$PORT" ping 2>/dev/null | grep -q PONG; then
          started=true
          break
        fi
        sleep 0.1
      done
      [[ $started == true ]] && break
      # Lost a race for the port with another process (the server logs it and exits): try the next one.
      log "redis-server on port $PORT did not answer; trying the next port"
      tail -n 5 "$DIR/server.log" >&2 || true
      if [[ -f "$DIR/redis.pid" ]]; then kill -9 "$(cat "$DIR/redis.pid")" 2>/dev/null || true; rm -f "$DIR/redis.pid"; fi
    fi
  fi
  PORT=$((PORT + 1))
done
if [[ $started != true ]]; then
  tail -n 20 "$DIR/server.log" >&2 || true
  log "could not start a server"
  exit 1
fi

log "Redis $("$SERVER" --version | awk '{print $3}' | cut -d= -f2) on 127.0.0.1:$PORT, append-only file synced on every write, directory $DIR"
echo "export PRIORITYASYNC_REDIS='127.0.0.1:$PORT,password=$PASSWORD'"
echo "export PRIORITYASYNC_REDIS_DATA='$DIR'"
