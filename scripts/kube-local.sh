#!/usr/bin/env bash
# kube-local.sh: a real Kubernetes control plane on loopback, for tests and for trying the chart.
#
#   scripts/kube-local.sh tools    build or reuse the cached binaries
#   scripts/kube-local.sh up       start etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#                                  and kwok (one fake node); print the environment to use it
#   scripts/kube-local.sh down     stop every process it started and remove the state folder
#   scripts/kube-local.sh status   what runs
#   scripts/kube-local.sh env      print `export KUBECONFIG=… PATH=…`
#
# Every command is idempotent. The API server has RBAC and PodSecurity admission on (a namespace
# labelled pod-security.kubernetes.io/enforce=restricted is enforced); kwok marks pods on its node
# Running and Ready without a kubelet, so containers never run. Ports are free loopback ports picked
# at `up` and kept in the state folder, so several runs (a developer's and the tests') can coexist
# with different KUBE_LOCAL_STATE folders.
#
# Binaries (cached under .tools/kube, git-ignored):
#   kube-apiserver, kube-controller-manager, kube-scheduler: built from the Go module proxy. A
#     throw-away module requires k8s.io/kubernetes vX and replaces each k8s.io/* staging module
#     with the published v0.Y.Z of the same release (the staging modules are v0.0.0 in its go.mod).
#   kwok: `go install sigs.k8s.io/kwok/cmd/kwok@vX`.
#   etcd: Debian's etcd-server (apt-installed when missing).
#   helm, kubectl: from the npm package the project already uses (scripts/helm.ts).
#
# Environment: KUBE_LOCAL_TOOLS (cache folder), KUBE_LOCAL_STATE (state folder of one control
# plane), KUBE_VERSION, KWOK_VERSION, KUBE_LOCAL_NICE (niceness of the Go build, default 10),
# KUBE_LOCAL_KEEP_GO=1 (keep the Go caches after a build).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.33.13}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${KUBE_LOCAL_TOOLS:-$ROOT/.tools/kube}
BIN=$TOOLS/bin
STATE=${KUBE_LOCAL_STATE:-$TOOLS/state}
NICE=${KUBE_LOCAL_NICE:-10}
ADMIN_TOKEN=kube-local-admin
COMPONENTS=(kwok kube-scheduler kube-controller-manager kube-apiserver etcd)   # stop order

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false -modcacherw"
export GOMODCACHE=$TOOLS/go/mod GOCACHE=$TOOLS/go/cache

log() { echo "[kube-local] $*" >&2; }
die() { log "error: $*"; exit 1; }

# ------------------------------------------------------------------------------------ binaries

k8s_stamp() { echo "$BIN/.kubernetes-v$KUBE_VERSION"; }

build_kubernetes() {
  local v=$KUBE_VERSION staging=v0.${KUBE_VERSION#1.} src=$TOOLS/src/kubernetes-v$KUBE_VERSION
  [[ -f $(k8s_stamp) ]] && return 0
  command -v go >/dev/null || die "go is needed to build kube-apiserver (Go >= 1.24)"
  log "building kube-apiserver, kube-controller-manager, kube-scheduler v$v from the Go module proxy (cold: 10-25 min on 2 cores)"
  rm -rf "$src"; mkdir -p "$src" "$BIN"
  printf 'module kube-local/build\n\ngo 1.24.0\n' > "$src/go.mod"
  (cd "$src" && go mod download "k8s.io/kubernetes@v$v") || die "k8s.io/kubernetes v$v is not on the Go module proxy (KUBE_VERSION)"
  # k8s.io/kubernetes's own go.mod replaces every staging module with ./staging/src/...; replace
  # each with its published tag instead.
  local mod=$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/v$v.mod
  {
    echo "require k8s.io/kubernetes v$v"
    echo "replace ("
    sed -n '/^replace (/,/^)/p' "$mod" | awk -v t="$staging" '/=>/ { print "\t" $1 " => " $1 " " t }'
    echo ")"
  } >> "$src/go.mod"
  local cmds=(kube-apiserver kube-controller-manager kube-scheduler) pkgs=() c
  for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$src" && nice -n "$NICE" go get "${pkgs[@]/%/@v$v}")
  local minor=${KUBE_VERSION#1.}; minor=${minor%%.*}
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=v$v -X k8s.io/component-base/version.gitMajor=1"
  ld+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  (cd "$src" && nice -n "$NICE" go build -trimpath -ldflags "$ld" -o "$BIN/" "${pkgs[@]}")
  for c in "${cmds[@]}"; do [[ -x $BIN/$c ]] || die "go build left no $c"; done
  touch "$(k8s_stamp)"
  log "built kube-apiserver v$v in $BIN"
}

build_kwok() {
  [[ -f $BIN/.kwok-v$KWOK_VERSION ]] && return 0
  command -v go >/dev/null || die "go is needed to build kwok"
  log "building kwok v$KWOK_VERSION"
  mkdir -p "$BIN"
  GOBIN=$BIN nice -n "$NICE" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  touch "$BIN/.kwok-v$KWOK_VERSION"
}

get_etcd() {
  [[ -x $BIN/etcd ]] && return 0
  if ! command -v etcd >/dev/null; then
    log "apt-get install etcd-server"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server) >/dev/null \
      || die "could not install Debian's etcd-server"
    # The package starts a system etcd on 2379; ours runs on its own ports, so leave that one be.
  fi
  mkdir -p "$BIN"; ln -sfn "$(command -v etcd)" "$BIN/etcd"
}

get_helm_kubectl() {
  [[ -x $BIN/helm && -x $BIN/kubectl ]] && return 0
  command -v node >/dev/null || die "node (>= 22) is needed to unpack helm and kubectl (. scripts/node24.sh)"
  mkdir -p "$BIN"
  local paths
  paths=$(cd "$ROOT" && node --input-type=module -e \
    "const h = await import('./scripts/helm.ts'); console.log(await h.helmBinary()); console.log(await h.kubectlBinary())")
  ln -sfn "$(sed -n 1p <<<"$paths")" "$BIN/helm"
  ln -sfn "$(sed -n 2p <<<"$paths")" "$BIN/kubectl"
}

tools() {
  mkdir -p "$TOOLS"
  # One build at a time (a developer's `up` and the test setup may race).
  exec 9>"$TOOLS/.build.lock"; flock 9
  get_etcd; get_helm_kubectl; build_kwok; build_kubernetes
  # The Go module and build caches (about 4 GB) serve only a rebuild: drop them unless asked to keep them.
  [[ ${KUBE_LOCAL_KEEP_GO:-0} == 1 ]] || rm -rf "$TOOLS/go" "$TOOLS/src"
  exec 9>&-
}

# ------------------------------------------------------------------------------------ processes

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

pid_of() {  # the pid in the component's pidfile, only while it still runs our binary
  local f=$STATE/$1.pid pid exe
  [[ -f $f ]] || return 1
  pid=$(<"$f"); exe=$(readlink -f "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ $exe == "$(readlink -f "$BIN/$1")" ]] && echo "$pid"
}

start() {  # name binary args...: one process in a session of its own, logs in the state folder
  local name=$1 pid want end; shift
  pid_of "$name" >/dev/null && return 0
  setsid "$@" >"$STATE/$name.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$STATE/$name.pid"
  # Until setsid has exec'd the binary, /proc/<pid>/exe is this shell or setsid, and pid_of would call
  # a starting process gone. Wait for the exec (or the process's end), so nothing asks too early.
  want=$(readlink -f "$1"); end=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && [[ $(readlink -f "/proc/$pid/exe" 2>/dev/null) != "$want" ]]; do
    ((SECONDS < end)) || { log "$name did not start its binary within 30 s"; return 1; }
    sleep 0.05
  done
}

wait_ready() {  # name url seconds [curl args]
  local name=$1 url=$2 end=$((SECONDS + $3)); shift 3
  until curl -sf -o /dev/null --max-time 2 "$@" "$url"; do
    pid_of "$name" >/dev/null || { log "$name exited; the end of $STATE/$name.log:"; tail -20 "$STATE/$name.log" >&2; return 1; }
    ((SECONDS < end)) || { log "$name not ready after $3 s; the end of $STATE/$name.log:"; tail -20 "$STATE/$name.log" >&2; return 1; }
    sleep 0.2
  done
}

stop_all() {  # TERM every component, wait up to 15 s, then KILL what is left
  local c p pids=()
  for c in "${COMPONENTS[@]}"; do p=$(pid_of "$c") && pids+=("$p"); done
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 75); do
    p=0; for c in "${pids[@]}"; do kill -0 "$c" 2>/dev/null && p=1; done
    ((p)) || return 0; sleep 0.2
  done
  log "killing what did not stop in 15 s"; kill -KILL "${pids[@]}" 2>/dev/null || true
}

pki() {
  local p=$STATE/pki
  [[ -f $p/complete ]] && return 0
  mkdir -p "$p"
  (
    cd "$p"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj /CN=kube-local-ca 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >san.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile san.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    echo "$ADMIN_TOKEN,kube-local-admin,kube-local-admin,system:masters" >tokens.csv
    touch complete
  )
}

write_kubeconfig() {
  local ca; ca=$(base64 -w0 <"$STATE/pki/ca.crt")
  cat >"$STATE/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: kube-local
  context: {cluster: kube-local, user: admin}
current-context: kube-local
EOF
}

ports() {  # reuse the ports of a running control plane, else pick free ones
  # shellcheck disable=SC1091 # written below
  if [[ -f $STATE/ports ]] && pid_of etcd >/dev/null; then . "$STATE/ports"; return 0; fi
  ETCD_PORT=$(free_port); ETCD_PEER_PORT=$(free_port); API_PORT=$(free_port)
  KCM_PORT=$(free_port); SCHED_PORT=$(free_port); KWOK_PORT=$(free_port)
  printf 'ETCD_PORT=%s ETCD_PEER_PORT=%s API_PORT=%s KCM_PORT=%s SCHED_PORT=%s KWOK_PORT=%s\n' \
    "$ETCD_PORT" "$ETCD_PEER_PORT" "$API_PORT" "$KCM_PORT" "$SCHED_PORT" "$KWOK_PORT" >"$STATE/ports"
}

up() {
  tools
  mkdir -p "$STATE"
  pki; ports; write_kubeconfig
  local P=$STATE/pki K=$STATE/kubeconfig kubectl=("$BIN/kubectl" --kubeconfig "$STATE/kubeconfig")
  start etcd "$BIN/etcd" --name kube-local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "kube-local=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes 1073741824
  wait_ready etcd "http://127.0.0.1:$ETCD_PORT/health" 30
  # RBAC is the only authorizer; PodSecurity admission (on by default) is named anyway. Privileged
  # containers are allowed cluster-wide, as on most clusters: a namespace's Pod Security level decides.
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" --client-ca-file "$P/ca.crt" \
    --token-auth-file "$P/tokens.csv" --authorization-mode RBAC --enable-admission-plugins PodSecurity --allow-privileged \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --endpoint-reconciler-type none --profiling=false
  wait_ready kube-apiserver "https://127.0.0.1:$API_PORT/readyz" 120 --cacert "$P/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN"
  # The controller manager gives namespaces their default ServiceAccount, runs Deployments and
  # garbage collection; the scheduler places pods on the kwok node.
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$K" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --service-account-private-key-file "$P/sa.key" \
    --root-ca-file "$P/ca.crt" --use-service-account-credentials=false \
    --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route,-bootstrapsigner,-tokencleaner'
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$K" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$SCHED_PORT"
  start kwok "$BIN/kwok" --kubeconfig "$K" --config "$ROOT/scripts/kube-local/kwok.yaml" \
    --server-address "127.0.0.1:$KWOK_PORT"
  wait_ready kube-controller-manager "https://127.0.0.1:$KCM_PORT/healthz" 60 -k
  wait_ready kube-scheduler "https://127.0.0.1:$SCHED_PORT/healthz" 60 -k
  wait_ready kwok "http://127.0.0.1:$KWOK_PORT/healthz" 60
  "${kubectl[@]}" apply -f "$ROOT/scripts/kube-local/node.yaml" >/dev/null
  "${kubectl[@]}" wait --for condition=Ready node/kwok-node-0 --timeout 60s >/dev/null
  watch_owner
  # A namespace is usable once the controller manager gave it its default ServiceAccount.
  local end=$((SECONDS + 60))
  until "${kubectl[@]}" -n default get serviceaccount default >/dev/null 2>&1; do
    ((SECONDS < end)) || die "the default ServiceAccount never appeared (is kube-controller-manager running?)"
    sleep 0.2
  done
  print_env
}

# KUBE_LOCAL_OWNER_PID (the test runner's pid): should that process end without calling `down`,
# a watchdog calls it, so no control plane outlives its tests.
watch_owner() {
  local owner=${KUBE_LOCAL_OWNER_PID:-} w
  [[ -n $owner ]] || return 0
  w=$(cat "$STATE/watchdog.pid" 2>/dev/null) && kill -0 "$w" 2>/dev/null && return 0
  # shellcheck disable=SC2016 # $0 and $1 are the inner shell's
  setsid bash -c 'while kill -0 "$0" 2>/dev/null; do sleep 2; done; exec bash "$1" down' "$owner" "${BASH_SOURCE[0]}" \
    </dev/null >>"$STATE/watchdog.log" 2>&1 &
  echo $! >"$STATE/watchdog.pid"
}

down() {
  local w
  # The watchdog, unless this is it (it execs `down` in its own pid).
  if w=$(cat "$STATE/watchdog.pid" 2>/dev/null) && [[ $w != "$$" ]]; then kill "$w" 2>/dev/null || true; fi
  stop_all
  rm -rf "$STATE"
}

status() {
  local c p
  for c in "${COMPONENTS[@]}"; do
    if p=$(pid_of "$c"); then echo "$c running (pid $p)"; else echo "$c stopped"; fi
  done
}

print_env() { echo "export KUBECONFIG=$STATE/kubeconfig PATH=$BIN:\$PATH"; }

case ${1:-} in
  tools) tools ;;
  # A failed `up` stops what it started (the state folder stays, with the logs that say why).
  up) trap 'rc=$?; ((rc == 0)) || { log "up failed; stopping what it started"; stop_all; }' EXIT; up ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  *) echo "usage: $0 tools|up|down|status|env" >&2; exit 2 ;;
esac
