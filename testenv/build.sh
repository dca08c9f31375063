#!/usr/bin/env bash
# Builds the real components the tests use, from the Go module proxy, into $BIN (outside git).
# Usage: testenv/build.sh [k8s] [etcd] [ferretdb] [kwok]   (no argument: all of them)
# A component is rebuilt only when its binary or its cache key is missing or stale.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_go
mkdir -p "$BIN"

gover=$(go env GOVERSION)
wrapper_key() { echo "$1-$(cat "$TESTENV_DIR/$2/go.mod" "$TESTENV_DIR/$2/go.sum" | sha256sum | cut -c1-16)-$gover"; }
fresh() { [[ -x "$BIN/$1" && "$(cat "$BIN/$1.key" 2>/dev/null)" == "$2" ]]; }

# build_step NAME KEY CMD...: runs CMD (which writes into $tmp) only when NAME is not fresh,
# then moves the results into place atomically so concurrent runs stay safe.
build_step() {
  local name=$1 key=$2; shift 2
  if fresh "$name" "$key"; then log "$name: cached ($key)"; return; fi
  log "$name: building ($key)"
  local start=$SECONDS
  tmp=$(mktemp -d "$BIN/.build.XXXXXX")
  if ! "$@" >"$tmp/build.log" 2>&1; then
    tail -n 30 "$tmp/build.log" >&2
    rm -rf "$tmp"
    die "building $name failed (full log above); check Go ($gover) and access to the Go module proxy, then rerun testenv/build.sh $name"
  fi
  for f in "$tmp"/*; do
    [[ $(basename "$f") == build.log ]] && continue
    mv -f "$f" "$BIN/"
  done
  rm -rf "$tmp"
  echo "$key" >"$BIN/$name.key"
  log "$name: built in $((SECONDS - start))s"
}

build_k8s() {
  local minor=${K8S_VERSION#1.}; minor=${minor%%.*}
  local ldf="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf="$ldf -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldf="$ldf -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  cd "$TESTENV_DIR/k8s"
  # One package at a time keeps peak memory within a 2-core / 24 GiB machine.
  for p in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    go build -trimpath -ldflags "$ldf" -o "$tmp/$p" "k8s.io/kubernetes/cmd/$p"
  done
}
build_etcd() { cd "$TESTENV_DIR/etcd" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3; }
build_ferretdb() { cd "$TESTENV_DIR/ferretdb" && go build -trimpath -ldflags "-s -w" -o "$tmp/ferretdb" github.com/FerretDB/FerretDB/cmd/ferretdb; }
build_kwok() { GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"; }

want=("$@"); [[ ${#want[@]} -gt 0 ]] || want=(ferretdb etcd kwok k8s)
for c in "${want[@]}"; do
  case $c in
    k8s) build_step kube-apiserver "$(wrapper_key "v$K8S_VERSION" k8s)" build_k8s ;;
    etcd) build_step etcd "$(wrapper_key "$ETCD_VERSION" etcd)" build_etcd ;;
    ferretdb) build_step ferretdb "$(wrapper_key "$FERRETDB_VERSION" ferretdb)" build_ferretdb ;;
    kwok) build_step kwok "kwok@$KWOK_VERSION-$gover" build_kwok ;;
    *) die "unknown component '$c' (expected: k8s, etcd, ferretdb, kwok)" ;;
  esac
done
