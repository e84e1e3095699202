{{/* Names and labels. */}}
{{- define "agent-runtime.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agent-runtime.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "agent-runtime.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-runtime.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "agent-runtime.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "agent-runtime.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: agent-runtime
{{- end -}}

{{- define "agent-runtime.image" -}}
{{- $image := index .root.Values.image .which -}}
{{- printf "%s:%s" $image.repository (default .root.Chart.AppVersion $image.tag) -}}
{{- end -}}

{{/* The sandbox pool name: pod names are "<pool>-<10 chars>", so it stays short. */}}
{{- define "agent-runtime.pool" -}}
{{- include "agent-runtime.fullname" . | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "agent-runtime.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- /* The bundled chart's service: its nats.fullname rule. */ -}}
{{- $svc := ternary .Release.Name (printf "%s-nats" .Release.Name) (contains "nats" .Release.Name) | trunc 63 | trimSuffix "-" -}}
{{- printf "nats://%s:4222" $svc -}}
{{- else -}}
{{- .Values.nats.url -}}
{{- end -}}
{{- end -}}

{{/* Container security context shared by every container of the chart. */}}
{{- define "agent-runtime.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "agent-runtime.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
The service configuration (config.yaml) every component reads. What the
chart decides comes first; .Values.config is merged over it.
*/}}
{{- define "agent-runtime.config" -}}
{{- $fullname := include "agent-runtime.fullname" . -}}
{{- $sandbox := .Values.sandbox -}}
{{- $storage := dict "type" $sandbox.storage.type -}}
{{- if eq $sandbox.storage.type "emptyDir" -}}
{{- $_ := set $storage "size_limit" $sandbox.storage.sizeLimit -}}
{{- else if eq $sandbox.storage.type "ephemeral" -}}
{{- $_ := set $storage "size" $sandbox.storage.size -}}
{{- if $sandbox.storage.storageClass }}{{ $_ := set $storage "storage_class" $sandbox.storage.storageClass }}{{ end -}}
{{- else -}}
{{- $_ := set $storage "claim_name" $sandbox.storage.claimName -}}
{{- end -}}
{{- $env := merge (dict "NATS_URL" (include "agent-runtime.natsUrl" .)) $sandbox.env -}}
{{- if and .Values.secrets.natsRoles.runner.existingSecret (not .Values.sessionCredentials.enabled) }}{{ $_ := set $env "NATS_INBOX_PREFIX" (include "agent-runtime.natsInboxPrefix" (dict "root" . "role" "runner")) }}{{ end -}}
{{- $sandboxCfg := dict
  "image" (include "agent-runtime.image" (dict "root" . "which" "runner"))
  "image_pull_policy" .Values.image.runner.pullPolicy
  "config_map" (printf "%s-config" $fullname)
  "env" $env
  "resources" $sandbox.resources
  "service_account_name" (include "agent-runtime.serviceAccountName" (dict "root" . "component" "sandbox"))
  "termination_grace_period" (printf "%ss" (include "agent-runtime.terminationGrace" (dict "root" . "value" $sandbox.terminationGracePeriodSeconds "what" "sandbox.terminationGracePeriodSeconds")))
  "storage" $storage
  "home_size_limit" $sandbox.homeSizeLimit
  "tmp_size_limit" $sandbox.tmpSizeLimit
  "node_selector" $sandbox.nodeSelector
  "tolerations" $sandbox.tolerations
  "labels" (merge (dict "app.kubernetes.io/instance" .Release.Name "app.kubernetes.io/part-of" "agent-runtime") $sandbox.podLabels)
-}}
{{- $list := list -}}
{{- range .Values.imagePullSecrets }}{{ $list = append $list .name }}{{ end -}}
{{- $_ := set $sandboxCfg "image_pull_secrets" $list -}}
{{- $secretEnv := list -}}
{{- with .Values.secrets.modelApiKey.existingSecret -}}
{{- $secretEnv = append $secretEnv (dict "name" "ANTHROPIC_API_KEY" "secret" . "key" $.Values.secrets.modelApiKey.key) -}}
{{- end -}}
{{- $runnerNats := include "agent-runtime.natsSecret" (dict "root" . "role" "runner") | fromJson -}}
{{- if not .Values.sessionCredentials.enabled }}{{ with $runnerNats.existingSecret -}}
{{- $secretEnv = append $secretEnv (dict "name" "NATS_USER" "secret" . "key" $runnerNats.userKey) -}}
{{- $secretEnv = append $secretEnv (dict "name" "NATS_PASSWORD" "secret" . "key" $runnerNats.passwordKey) -}}
{{- end }}{{ end -}}
{{- if $secretEnv }}{{ $_ := set $sandboxCfg "secret_env" $secretEnv }}{{ end -}}
{{- if $sandbox.runtimeClassName }}{{ $_ := set $sandboxCfg "runtime_class_name" $sandbox.runtimeClassName }}{{ end -}}
{{- if gt (int $sandbox.probePort) 0 }}{{ $_ := set $sandboxCfg "readiness" (dict "port" (int $sandbox.probePort) "path" "/health/ready") }}{{ end -}}
{{- $runner := dict "max_sessions" 1 -}}
{{- if gt (int $sandbox.probePort) 0 }}{{ $_ := set $runner "http_port" (int $sandbox.probePort) }}{{ end -}}
{{- $chart := dict
  "server" (dict "host" "0.0.0.0" "port" (int .Values.gateway.port) "readiness" "bus")
  "nats" (dict "url" (include "agent-runtime.natsUrl" .) "prefix" .Values.nats.prefix)
  "session" (dict "work_dir" "/sandbox/sessions" "marker_dir" "/sandbox/markers")
  "runner" $runner
  "controller" (dict
    "http_port" (int .Values.controller.port)
    "pool" (include "agent-runtime.pool" .)
    "warm_pool" (int $sandbox.warmPool)
    "max_pods" (int $sandbox.maxPods)
    "pod_ready_timeout" $sandbox.podReadyTimeout
    "session_idle_timeout" (toString $sandbox.sessionIdleTimeout)
    "leader_election" (dict "enabled" .Values.controller.leaderElection "lease_name" (printf "%s-controller" $fullname | trunc 63 | trimSuffix "-"))
    "sandbox" $sandboxCfg)
-}}
{{- with .Values.sessionCredentials }}{{ if .enabled -}}
{{- $credentials := dict "signing_key_file" (printf "/var/run/agent-runtime/signing-key/%s" .signingKey.key) "ttl" .ttl -}}
{{- if .account }}{{ $_ := set $credentials "account" .account }}{{ end -}}
{{- $_ := set $chart.controller "session_credentials" $credentials -}}
{{- end }}{{ end -}}
{{- toYaml (mustMergeOverwrite $chart (deepCopy .Values.config)) -}}
{{- end -}}

{{/*
The NATS secret of a role (dict "root" . "role" "gateway|controller|runner"): its own
(secrets.natsRoles.<role>) when set, else the shared secrets.nats; empty: anonymous.
*/}}
{{- define "agent-runtime.natsSecret" -}}
{{- $own := index .root.Values.secrets.natsRoles .role -}}
{{- if $own.existingSecret -}}{{- toJson (dict "existingSecret" $own.existingSecret "userKey" $own.userKey "passwordKey" $own.passwordKey "own" true) -}}
{{- else -}}{{- toJson (dict "existingSecret" .root.Values.secrets.nats.existingSecret "userKey" .root.Values.secrets.nats.userKey "passwordKey" .root.Values.secrets.nats.passwordKey "own" false) -}}
{{- end -}}
{{- end -}}

{{/* A role's reply inbox prefix (contract/permissions.ts inboxPrefixFor). */}}
{{- define "agent-runtime.natsInboxPrefix" -}}
{{- printf "_INBOX_%s.%s" (replace "." "_" .root.Values.nats.prefix) .role -}}
{{- end -}}

{{/* NATS_USER and NATS_PASSWORD of a role (dict "root" . "role" …), and its own inbox when it has its own user, as container env entries. */}}
{{- define "agent-runtime.natsAuthEnv" -}}
{{- $s := include "agent-runtime.natsSecret" . | fromJson -}}
{{- if $s.existingSecret }}
- name: NATS_USER
  valueFrom: {secretKeyRef: {name: {{ $s.existingSecret }}, key: {{ $s.userKey }}}}
- name: NATS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $s.existingSecret }}, key: {{ $s.passwordKey }}}}
{{- end }}
{{- if $s.own }}
- name: NATS_INBOX_PREFIX
  value: {{ include "agent-runtime.natsInboxPrefix" . | quote }}
{{- end }}
{{- end -}}

{{/*
Milliseconds of a duration of the service config (config/duration.ts: 500ms, 30s, 5m,
1h30m, 0), rounded up; fails on anything else.
*/}}
{{- define "agent-runtime.durationMs" -}}
{{- $text := toString . | trim -}}
{{- $total := 0.0 -}}
{{- if ne $text "0" -}}
{{- if not (regexMatch "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$" $text) -}}
{{- fail (printf "cannot read the duration %q (use e.g. 500ms, 30s, 5m, 1h30m)" $text) -}}
{{- end -}}
{{- $unitMs := dict "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h)" $text -1 -}}
{{- $amount := regexFind "^[0-9]+(\\.[0-9]+)?" . -}}
{{- $total = addf $total (mulf (float64 $amount) (get $unitMs (trimPrefix $amount .))) -}}
{{- end -}}
{{- end -}}
{{- ceil $total | int -}}
{{- end -}}

{{/*
Seconds a gateway or a runner needs to drain after SIGTERM: running turns get
server.shutdown_grace, then each CLI engine.stop_grace before it is killed
(both from .Values.config; the chart sets neither).
*/}}
{{- define "agent-runtime.drainSeconds" -}}
{{- $shutdown := include "agent-runtime.durationMs" (dig "server" "shutdown_grace" "30s" .Values.config) | int -}}
{{- $stop := include "agent-runtime.durationMs" (dig "engine" "stop_grace" "3s" .Values.config) | int -}}
{{- div (add $shutdown $stop 999) 1000 -}}
{{- end -}}

{{/*
terminationGracePeriodSeconds of gateways or sandbox pods (dict "root" . "value" <the value>
"what" <its name>): the value when set, which must exceed the drain; else the drain plus 10 s.
*/}}
{{- define "agent-runtime.terminationGrace" -}}
{{- $drain := include "agent-runtime.drainSeconds" .root | int -}}
{{- if kindIs "invalid" .value -}}
{{- add $drain 10 -}}
{{- else if le (int .value) $drain -}}
{{- fail (printf "%s (%d s) must be above the drain, server.shutdown_grace + engine.stop_grace = %d s, or Kubernetes kills running turns before they end; leave it empty for %d s" .what (int .value) $drain (add $drain 10)) -}}
{{- else -}}
{{- int .value -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount name of a component (dict "root" . "component" "gateway|controller|sandbox"). */}}
{{- define "agent-runtime.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount -}}
{{- if $sa.name -}}{{- $sa.name -}}
{{- else if $sa.create -}}{{- printf "%s-%s" (include "agent-runtime.fullname" .root) .component -}}
{{- else -}}default
{{- end -}}
{{- end -}}

{{/*
Topology spread constraints of a component (dict "root" . "component" … "constraints" …): as
given, with the component's own pods as the labelSelector when a constraint names none.
*/}}
{{- define "agent-runtime.topologySpread" -}}
{{- $out := list -}}
{{- range .constraints -}}
{{- $c := deepCopy . -}}
{{- if not (hasKey $c "labelSelector") -}}
{{- $labels := merge (include "agent-runtime.selectorLabels" $.root | fromYaml) (dict "app.kubernetes.io/component" $.component) -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $labels) -}}
{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}
