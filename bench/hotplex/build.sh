#!/usr/bin/env bash
# Builds HotPlex v0.10.0 (the Go daemon the benchmark compares with) from its
# public source into .tools/hotplex/hotplexd (git-ignored; nothing of HotPlex
# is committed). Upstream listens on ":PORT" (every interface) and cannot be
# told a bind address, so one line is patched: the address is
# "$HOTPLEX_BIND_HOST:$PORT" (the benchmark sets 127.0.0.1).
#
#   bench/hotplex/build.sh [git-dir-or-url]
#
# The source comes from a local git directory when given (or HOTPLEX_GIT),
# else from GitHub. Needs go (module downloads go through the Go proxy).
set -euo pipefail
REPO_URL=https://github.com/aaronwong1989/hotplex
TAG=v0.10.0
COMMIT=c101e6bcdaddadce61d0e79cdfe1cd8823c3db05
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/.tools/hotplex"
bin="$out/hotplexd"
if [ -x "$bin" ] && [ "$(cat "$out/commit" 2>/dev/null)" = "$COMMIT" ]; then
  echo "$bin"; exit 0
fi
command -v go >/dev/null || { echo "go not found: cannot build HotPlex" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source=${1:-${HOTPLEX_GIT:-}}
if [ -z "$source" ]; then
  git clone --quiet --filter=blob:none --no-checkout "$REPO_URL" "$work/git" >&2
  source="$work/git"
  [ -d "$source/.git" ] && source="$source/.git"
fi
git --git-dir="$source" cat-file -e "$COMMIT^{commit}" 2>/dev/null || git --git-dir="$source" fetch --quiet "$REPO_URL" "$TAG" >&2
[ "$(git --git-dir="$source" rev-parse "$TAG^{commit}" 2>/dev/null || echo "$COMMIT")" = "$COMMIT" ] \
  || { echo "$TAG is not $COMMIT in $source" >&2; exit 1; }
mkdir -p "$work/src"
git --git-dir="$source" archive "$COMMIT" | tar -x -C "$work/src"
main="$work/src/cmd/hotplexd/main.go"
grep -q 'Addr:    ":" + port,' "$main" || { echo "HotPlex main.go changed: bind patch does not apply" >&2; exit 1; }
# The one-line patch: bind to HOTPLEX_BIND_HOST (empty = upstream's every interface).
sed -i 's|Addr:    ":" + port,|Addr:    os.Getenv("HOTPLEX_BIND_HOST") + ":" + port,|' "$main"
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" ./cmd/hotplexd) >&2
mv "$bin.tmp" "$bin"
echo "$COMMIT" > "$out/commit"
echo "$bin"
