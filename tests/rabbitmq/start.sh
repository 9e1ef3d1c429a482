#!/usr/bin/env bash
# Starts a throwaway RabbitMQ node for the tests and samples: a temporary directory (its data, logs, configuration and Erlang
# cookie), loopback ports of its own (AMQP, Erlang distribution, and an epmd of its own, so that neither a system node nor a
# second throwaway node clashes with it), a user "priorityasync" with a random password. Installs rabbitmq-server from Debian's
# packages when it is missing (as root only). As root the node runs as the "rabbitmq" user, which owns the directory (the server
# drops to that user on Debian, and its data directory must be that user's).
#
# Prints shell assignments on stdout (everything else goes to stderr), so that a caller can take them into its environment:
#   eval "$(tests/rabbitmq/start.sh)"
#   trap 'tests/rabbitmq/stop.sh' EXIT
#     PRIORITYASYNC_RABBITMQ       the AMQP URI the tests, samples and BrokerWorker read
#     PRIORITYASYNC_RABBITMQ_DATA  the node's directory, which stop.sh stops and removes. It holds two scripts for tests that
#                                  break the server: rabbitmqctl (the CLI pointed at this node) and node.sh (starts the node again,
#                                  exactly as here, after a kill -9; the node's process id is in rabbitmq.pid).
#
# Environment (optional): PRIORITYASYNC_RABBITMQ_PORT (first AMQP port tried, default 55672; the next free one is taken),
# PRIORITYASYNC_RABBITMQ_PASSWORD (default: random).
set -euo pipefail

log() { echo "rabbitmq: $*" >&2; }

LIB=/usr/lib/rabbitmq/bin
if [[ ! -x $LIB/rabbitmq-server ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    log "rabbitmq-server not found; install it (as root: apt-get install -y rabbitmq-server)"
    exit 1
  fi
  log "rabbitmq-server not found: installing it from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  # Debian's package starts a system node unless policy-rc.d forbids it; the tests never use that one (their own ports and epmd).
  apt-get install -y -q rabbitmq-server >&2
  [[ -x $LIB/rabbitmq-server ]] || { log "rabbitmq-server still not found after installing it"; exit 1; }
fi

# As root, run the node and its CLI as "rabbitmq" (Debian's wrapper would drop to it anyway); as anyone else, directly.
if [[ $(id -u) -eq 0 ]]; then
  OWNER=rabbitmq
  AS_SERVER="runuser -u rabbitmq --"
else
  OWNER=$(id -un)
  AS_SERVER=""
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/priorityasync-rabbitmq.XXXXXX")
# On any failure from here on, leave nothing behind: stop the node and its epmd if they started, remove the directory.
cleanup_on_failure() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    if [[ -f "$DIR/rabbitmq.pid" ]]; then kill -9 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null || true; fi
    if [[ -f "$DIR/epmd.port" ]]; then ERL_EPMD_PORT=$(cat "$DIR/epmd.port") epmd -kill >/dev/null 2>&1 || true; fi
    rm -rf -- "$DIR"
  fi
}
trap cleanup_on_failure EXIT
mkdir -p "$DIR/home" "$DIR/mnesia" "$DIR/log"
chmod 700 "$DIR"
chown -R "$OWNER" "$DIR"
PASSWORD="${PRIORITYASYNC_RABBITMQ_PASSWORD:-$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')}"
# The Erlang cookie: only this node and its CLI (rabbitmqctl below) share it.
head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > "$DIR/home/.erlang.cookie"
chown "$OWNER" "$DIR/home/.erlang.cookie"
chmod 400 "$DIR/home/.erlang.cookie"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The ports every throwaway node's directory holds (written below), also while that node is down: a test that kills and restarts
# a node (tests/Shared/RabbitMq/TestNode.cs) must find its ports still free.
reserved_ports() { cat "${TMPDIR:-/tmp}"/priorityasync-rabbitmq.*/ports 2>/dev/null | tr '\n' ' ' || true; }
# The first port from $1 that nothing listens on and that is not reserved or in the rest of the arguments.
free_port() {
  local port=$1; shift
  local taken=" $* $(reserved_ports) "
  while port_in_use "$port" || [[ $taken == *" $port "* ]]; do port=$((port + 1)); done
  echo "$port"
}
# Whether process $1 listens on 127.0.0.1:$2. Ready means our node listens: a node that lost its port to another listener (another
# node starting at the same time) would otherwise pass for ready, and clients would be refused its password by the other node.
owns_listener() {
  local inode
  for inode in $(awk -v a="$(printf '0100007F:%04X' "$2")" '$2 == a && $4 == "0A" { print $10 }' /proc/net/tcp); do
    ls -l "/proc/$1/fd" 2>/dev/null | grep -qF "socket:[$inode]" && return 0
  done
  return 1
}
# Two start.sh runs at once (test assemblies run in parallel) choose their ports one after the other.
LOCK="${TMPDIR:-/tmp}/priorityasync-rabbitmq.lock"
lock_ports() { if ( : >>"$LOCK" ) 2>/dev/null; then exec 9>>"$LOCK"; flock 9; fi; }
unlock_ports() { flock -u 9 2>/dev/null || true; }

PORT="${PRIORITYASYNC_RABBITMQ_PORT:-55672}"
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || (( PORT < 1024 || PORT > 65000 )); then
  log "PRIORITYASYNC_RABBITMQ_PORT is '$PORT'; expected a port from 1024 to 65000"
  exit 2
fi
EPMD_BASE=54369
DIST_BASE=55772

started=false
for _ in $(seq 1 10); do
  lock_ports
  PORT=$(free_port "$PORT")
  EPMD_PORT=$(free_port "$EPMD_BASE" "$PORT")
  DIST_PORT=$(free_port "$DIST_BASE" "$PORT" "$EPMD_PORT")
  printf '%s\n' "$PORT" "$EPMD_PORT" "$DIST_PORT" > "$DIR/ports"
  unlock_ports
  NODE="priorityasync-$PORT@localhost"
  echo "$EPMD_PORT" > "$DIR/epmd.port"
  cat > "$DIR/rabbitmq.conf" <<CONF
listeners.tcp.1 = 127.0.0.1:$PORT
default_user = priorityasync
default_pass = $PASSWORD
default_vhost = /
default_user_tags.administrator = true
log.file = $DIR/log/rabbit.log
log.console = false
CONF
  # Everything the node reads, in one file, so that node.sh and rabbitmqctl find this node and only this one.
  cat > "$DIR/env" <<ENV
export HOME='$DIR/home'
export RABBITMQ_NODENAME='$NODE'
export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
export RABBITMQ_NODE_PORT=$PORT
export RABBITMQ_DIST_PORT=$DIST_PORT
export ERL_EPMD_ADDRESS=127.0.0.1
export ERL_EPMD_PORT=$EPMD_PORT
export RABBITMQ_CONF_ENV_FILE='$DIR/rabbitmq-env.conf'
export RABBITMQ_CONFIG_FILE='$DIR/rabbitmq.conf'
export RABBITMQ_MNESIA_BASE='$DIR/mnesia'
export RABBITMQ_LOG_BASE='$DIR/log'
export RABBITMQ_PID_FILE='$DIR/rabbitmq.pid'
export RABBITMQ_ENABLED_PLUGINS_FILE='$DIR/enabled_plugins'
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}'
ENV
  : > "$DIR/rabbitmq-env.conf"
  echo '[].' > "$DIR/enabled_plugins"
  cat > "$DIR/node.sh" <<SCRIPT
#!/usr/bin/env bash
# Starts this throwaway node in the background, as tests/rabbitmq/start.sh did; its process id goes to rabbitmq.pid.
. '$DIR/env'
cd '$DIR'
setsid $AS_SERVER env $(sed -n 's/^export \([A-Z_]*\)=.*/\1="$\1"/p' "$DIR/env" | tr '\n' ' ') $LIB/rabbitmq-server >>'$DIR/log/server.out' 2>&1 < /dev/null &
SCRIPT
  cat > "$DIR/rabbitmqctl" <<SCRIPT
#!/usr/bin/env bash
# rabbitmqctl for this throwaway node only (its name, cookie and epmd).
. '$DIR/env'
cd '$DIR'
exec $AS_SERVER env HOME="\$HOME" ERL_EPMD_PORT="\$ERL_EPMD_PORT" $LIB/rabbitmqctl -n "\$RABBITMQ_NODENAME" "\$@"
SCRIPT
  chmod 755 "$DIR/node.sh" "$DIR/rabbitmqctl"
  chown "$OWNER" "$DIR"/*
  rm -f "$DIR/rabbitmq.pid"
  "$DIR/node.sh"
  # Ready when the node itself listens on its AMQP port (the listener starts last; about 6 s here, much longer on a busy machine:
  # the wait is bounded at 3 minutes); the node's log says why if it never does.
  for _ in $(seq 1 1800); do
    if [[ -f "$DIR/rabbitmq.pid" ]] && owns_listener "$(cat "$DIR/rabbitmq.pid")" "$PORT"; then started=true; break; fi
    if [[ -f "$DIR/rabbitmq.pid" ]] && ! kill -0 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  [[ $started == true ]] && break
  # Lost a race for a port with another process (the node logs it and exits): try the next ones.
  log "the node on ports $PORT/$DIST_PORT (epmd $EPMD_PORT) did not start; trying the next ports"
  tail -n 5 "$DIR/log/server.out" >&2 || true
  if [[ -f "$DIR/rabbitmq.pid" ]]; then kill -9 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null || true; fi
  ERL_EPMD_PORT=$EPMD_PORT epmd -kill >/dev/null 2>&1 || true
  rm -rf "${DIR:?}/mnesia/"* "$DIR/rabbitmq.pid"
  PORT=$((PORT + 1)); EPMD_BASE=$((EPMD_PORT + 1)); DIST_BASE=$((DIST_PORT + 1))
done
if [[ $started != true ]]; then
  tail -n 20 "$DIR/log/server.out" "$DIR/log/rabbit.log" >&2 || true
  log "could not start a node"
  exit 1
fi

log "RabbitMQ $(dpkg-query -W -f '${Version}' rabbitmq-server 2>/dev/null | cut -d- -f1) node $NODE on 127.0.0.1:$PORT (distribution $DIST_PORT, epmd $EPMD_PORT), directory $DIR"
echo "export PRIORITYASYNC_RABBITMQ='amqp://priorityasync:$PASSWORD@127.0.0.1:$PORT/'"
echo "export PRIORITYASYNC_RABBITMQ_DATA='$DIR'"
