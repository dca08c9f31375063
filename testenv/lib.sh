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

ETCD_PORT=${MONGOBENCH_ETCD_PORT:-23790}
ETCD_PEER_PORT=${MONGOBENCH_ETCD_PEER_PORT:-23800}
APISERVER_PORT=${MONGOBENCH_APISERVER_PORT:-6443}
FERRETDB_PORT=${MONGOBENCH_FERRETDB_PORT:-27018}

log() { printf '[testenv] %s\n' "$*" >&2; }
die() { printf '[testenv] error: %s\n' "$*" >&2; exit 1; }

need_go() {
  command -v go >/dev/null 2>&1 || die "the Go toolchain is missing: install Go 1.26 (https://go.dev/dl) and put 'go' on PATH"
}
