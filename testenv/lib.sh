# Shared settings for the testenv scripts; sourced, never run.
# Binaries are cached outside the checkout, keyed by version + wrapper go.mod/go.sum + Go version,
# so every clone on this machine reuses them and only a changed key rebuilds.
TESTENV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${MONGOBENCH_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mongobench-testenv}
BIN=$CACHE/bin
RUN=${MONGOBENCH_TESTENV_RUN:-$CACHE/run}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-modcacherw

K8S_VERSION=1.36.3
ETCD_VERSION=v3.6.16
FERRETDB_VERSION=v1.24.2
KWOK_VERSION=v0.8.0
HELM_VERSION=v4.2.4
# SecantusDB: a MongoDB-wire server over the real WiredTiger library (GPL-2.0-only, a separate
# process the project only talks to over the wire). Built from crates.io (crate secantus-mdb,
# binary secantusd-rs); its manifest asks for a newer Rust than it needs.
SECANTUS_VERSION=0.5.3-beta.196

ETCD_PORT=${MONGOBENCH_ETCD_PORT:-23790}
ETCD_PEER_PORT=${MONGOBENCH_ETCD_PEER_PORT:-23800}
APISERVER_PORT=${MONGOBENCH_APISERVER_PORT:-6443}
FERRETDB_PORT=${MONGOBENCH_FERRETDB_PORT:-27018}
FERRETDB_SQLITE_PORT=${MONGOBENCH_FERRETDB_SQLITE_PORT:-27019}
SECANTUS_PORT=${MONGOBENCH_SECANTUS_PORT:-27020}
SECANTUS2_PORT=${MONGOBENCH_SECANTUS2_PORT:-27021}
POSTGRES_PORT=${MONGOBENCH_POSTGRES_PORT:-25432}

# Debian's PostgreSQL 15 server (package postgresql-15), the `mongo` server's storage.
PG_BIN=${MONGOBENCH_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}
# postgres refuses to run as root: as root, the cluster runs as this system user (testenv/build
# creates it), and its data directory lives outside $RUN, which may sit in a home directory
# that user cannot enter (/root is 0700). $RUN/postgres.data records where.
PG_USER=mongobench-pg
if [[ $EUID -eq 0 ]]; then
  PG_AS=(setpriv "--reuid=$PG_USER" "--regid=$PG_USER" --clear-groups)
  PG_DATA=/tmp/mongobench-pg-$(printf %s "$RUN" | sha256sum | cut -c1-12)
else
  PG_AS=()
  PG_DATA=$RUN/postgres
fi
# FerretDB's role and database (testenv/postgres/init.sql); no password: loopback only, trust.
PG_URL=postgres://ferretdb@127.0.0.1:$POSTGRES_PORT/ferretdb

log() { printf '[testenv] %s\n' "$*" >&2; }
die() { printf '[testenv] error: %s\n' "$*" >&2; exit 1; }

# lock_run: holds $RUN's lock until the script exits, so that runs of up and down never overlap
# (tests start components from several threads at once). Processes the script leaves running
# must be started with {RUN_LOCK_FD}>&-, or they would hold the lock after it exits.
lock_run() {
  mkdir -p "$RUN"
  exec {RUN_LOCK_FD}>>"$RUN/.lock"
  flock "$RUN_LOCK_FD"
}

# write_atomically FILE: standard input becomes FILE whole, or FILE is left as it was: a reader
# never sees it empty or half-written. The temporary name never matches env.*.
write_atomically() {
  local tmp
  tmp=$(mktemp "$(dirname "$1")/.writing.XXXXXX")
  cat >"$tmp" && chmod 644 "$tmp" && mv -f "$tmp" "$1" || { rm -f "$tmp"; return 1; }
}

# write_all_env: $RUN/env is every running component's env file, or absent when none runs.
write_all_env() {
  if compgen -G "$RUN/env.*" >/dev/null; then
    cat "$RUN"/env.* | sort -u | write_atomically "$RUN/env"
  else
    rm -f "$RUN/env"
  fi
}

need_go() {
  command -v go >/dev/null 2>&1 || die "the Go toolchain is missing: install Go 1.26 (https://go.dev/dl) and put 'go' on PATH"
}

# The executable a component's pid file must point at: a pid whose process runs anything else
# (a recycled pid) is never signalled.
exe_of() {
  case $1 in
    postgres) echo "$PG_BIN/postgres" ;;
    ferretdb-sqlite) echo "$BIN/ferretdb" ;;
    secantus | secantus2) echo "$BIN/secantusd-rs" ;;
    *) echo "$BIN/$1" ;;
  esac
}

# stop NAME: stops the process of $RUN/NAME.pid if it is still ours, then removes the pid file.
# postgres gets SIGINT (fast shutdown: it disconnects its clients); the others SIGTERM.
stop() {
  local name=$1 pidfile=$RUN/$1.pid pid sig=TERM
  [[ -f $pidfile ]] || return 0
  pid=$(cat "$pidfile")
  [[ $name == postgres ]] && sig=INT
  # readlink shows "PATH (deleted)" when the binary was rebuilt meanwhile, hence the `*`.
  if kill -0 "$pid" 2>/dev/null && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(exe_of "$name")"* ]]; then
    kill -s "$sig" "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    # A postmaster killed outright would leave its backends behind: SIGQUIT (immediate
    # shutdown) takes them along.
    [[ $name == postgres ]] && kill -0 "$pid" 2>/dev/null && kill -QUIT "$pid" 2>/dev/null && sleep 2
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    log "$name: stopped (pid $pid)"
  fi
  rm -f "$pidfile"
}
