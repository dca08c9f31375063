#!/usr/bin/env bash
# Pins k8s.io/kubernetes to a version and regenerates the replace block its staging modules need
# (the published go.mod requires them at v0.0.0, which a consumer cannot resolve).
# Run only when changing the version; commit the resulting go.mod and go.sum.
set -euo pipefail
KV=${1:-1.36.3}; SV=0.${KV#1.}
cd "$(dirname "$0")"
export GOTOOLCHAIN=local GOFLAGS=-modcacherw
go mod edit -require="k8s.io/kubernetes@v$KV"
(cd "$(mktemp -d)" && go mod download "k8s.io/kubernetes@v$KV")
GOMOD="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$KV.mod"
for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$GOMOD"); do
  go mod edit -replace="$m=$m@v$SV"
done
go mod tidy
