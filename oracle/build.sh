#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager (the oracle apiforge is compared to)
# from the Go module proxy into a cache directory outside the repository.
# Idempotent: once the binaries for KUBE_VERSION exist, a rerun only prints the recorded cost.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
CACHE="${APIFORGE_ORACLE_CACHE:-$HOME/.cache/apiforge-oracle}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
STAGING_VERSION="v0${KUBE_VERSION#v1}"
BIN="$CACHE/bin/$KUBE_VERSION"
STATS="$BIN/build-stats.txt"

report() {
    echo "oracle: kube-apiserver $KUBE_VERSION in $BIN"
    grep -E 'Elapsed \(wall clock\)|Maximum resident set size' "$STATS" | sed 's/^\s*/oracle: first build /'
}

if [[ -x "$BIN/kube-apiserver" && -x "$BIN/kube-controller-manager" && -f "$STATS" ]]; then
    report
    exit 0
fi

export GOMODCACHE="$CACHE/gomod" GOCACHE="$CACHE/gocache" GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
SRC="$CACHE/src"
mkdir -p "$SRC" "$BIN"
cd "$SRC"

# kube's own go.mod replaces every k8s.io staging module with ./staging; outside the kube tree those
# directories do not exist, so each one is pinned to the published v0.x tag of the same release.
"$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
KUBE_MOD="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod"
{
    echo "module apiforge.local/oracle"
    echo
    echo "go 1.24.0"
    echo
    echo "godebug default=go1.24"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s\.io/[a-z0-9.-]*\) => \./staging/.*#\t\1 => \1 '"$STAGING_VERSION"'#p' "$KUBE_MOD"
    echo ")"
} >go.mod
"$GO" get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION"

# The same -X flags kube's hack/lib/version.sh sets, so /version reports the release.
MINOR="${KUBE_VERSION#v1.}"
MINOR="${MINOR%%.*}"
LDFLAGS="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    LDFLAGS+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$MINOR"
    LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# One timed run builds both, kube-apiserver first: it lands in $BIN as soon as it is linked, so that it can
# serve while the controller manager still compiles (most packages are shared and built once).
TMPBIN="$BIN.partial"
mkdir -p "$TMPBIN"
export GO LDFLAGS BIN TMPBIN
/usr/bin/time -v -o "$TMPBIN/build-stats.txt" bash -c '
    set -e
    for command in kube-apiserver kube-controller-manager; do
        "$GO" build -trimpath -ldflags="$LDFLAGS" -o "$TMPBIN/$command" "k8s.io/kubernetes/cmd/$command"
        mv "$TMPBIN/$command" "$BIN/$command"
        echo "oracle: built $BIN/$command"
    done'
mv "$TMPBIN/build-stats.txt" "$STATS"
rmdir "$TMPBIN"
report
