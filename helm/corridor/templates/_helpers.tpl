{{/* Labels every object of the release carries. */}}
{{- define "corridor.labels" -}}
app.kubernetes.io/part-of: corridor
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The Secret holding DATABASE_URL, REDIS_URL and KAFKA_BROKERS. */}}
{{- define "corridor.infraSecretName" -}}
{{- .Values.infra.existingSecret | default (printf "%s-infra" .Release.Name) -}}
{{- end }}

{{/* CORRIDOR_QUOTES_FX_URL for quotes-fx: where the gateway and the services find a service. */}}
{{- define "corridor.serviceUrlKey" -}}
{{- printf "CORRIDOR_%s_URL" (. | replace "-" "_" | upper) -}}
{{- end }}

{{/*
Where the others reach a service, from (list name entry): its `url` when given, else its
Service in this namespace. A service switched off here must say where it runs instead: the
gateway and the other services call every one of them.
*/}}
{{- define "corridor.serviceUrl" -}}
{{- $name := index . 0 }}
{{- $svc := index . 1 }}
{{- if $svc.url }}
{{- $svc.url }}
{{- else if include "corridor.enabled" $svc }}
{{- printf "http://%s:%v" $name $svc.port }}
{{- else }}
{{- fail (printf "services.%s is disabled: set services.%s.url to where it runs (the gateway and the other services call it)" $name $name) }}
{{- end }}
{{- end }}

{{/* Whether a deployable entry is switched on (absent `enabled` means on). */}}
{{- define "corridor.enabled" -}}
{{- if or (not (hasKey . "enabled")) .enabled }}true{{ end -}}
{{- end }}

{{/*
The autoscaling of a deployable, from (list root entry), as JSON: the chart's `autoscaling` with
the entry's own `autoscaling` over it, field by field (sprig's merge would let a default `true`
win over an explicit `false`).
*/}}
{{- define "corridor.autoscaling" -}}
{{- $root := index . 0 }}
{{- $own := (index . 1).autoscaling | default dict }}
{{- $out := dict }}
{{- range $k, $v := $root.Values.autoscaling }}
{{- $_ := set $out $k (ternary (index $own $k) $v (hasKey $own $k)) }}
{{- end }}
{{- toJson $out -}}
{{- end }}

{{/* Pod labels that select one deployable's pods, from (list root name). */}}
{{- define "corridor.selectorLabels" -}}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/name: {{ index . 1 }}
{{- end }}

{{/*
topologySpreadConstraints of a Deployment, from (list root name): one per key of
topologySpread.topologyKeys (zones, then nodes).
*/}}
{{- define "corridor.topologySpread" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- range $key := $root.Values.topologySpread.topologyKeys }}
- maxSkew: {{ $root.Values.topologySpread.maxSkew }}
  topologyKey: {{ $key }}
  whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- include "corridor.selectorLabels" (list $root $name) | nindent 6 }}
{{- end }}
{{- end }}

{{/*
Annotations that roll a pod template when the contents of the chart's Secrets change (the infra
Secret the chart renders; the values naming an existing one). Secrets the chart does not render
(infra.existingSecret, envFrom, a connector's secretFiles) are not seen: restart after changing
them (docs/operations.md, "Rotating secrets").
*/}}
{{- define "corridor.checksums" -}}
checksum/infra-secret: {{ include (print .Template.BasePath "/infra-secret.yaml") . | sha256sum }}
checksum/infra: {{ .Values.infra | toJson | sha256sum }}
{{- end }}

{{/*
A NetworkPolicy destination (cidrs, peers) as the `to` list of an egress rule, from (what dest
failIfEmpty): ipBlocks for `cidrs` (strings, or {cidr, except}), then `peers` as given.
*/}}
{{- define "corridor.netpolPeers" -}}
{{- $what := index . 0 }}
{{- $dest := index . 1 }}
{{- $required := index . 2 }}
{{- if and $required (not (or $dest.cidrs $dest.peers)) }}
{{- fail (printf "networkPolicy.egress.%s names no destination: set its cidrs or peers (where it runs), or turn networkPolicy.enabled off" $what) }}
{{- end }}
{{- range $c := $dest.cidrs }}
{{- if kindIs "string" $c }}
- ipBlock:
    cidr: {{ $c }}
{{- else }}
- ipBlock:
    {{- toYaml $c | nindent 4 }}
{{- end }}
{{- end }}
{{- with $dest.peers }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The ports of a NetworkPolicy destination, TCP (DNS: UDP and TCP). From (dest udpToo). */}}
{{- define "corridor.netpolPorts" -}}
{{- $dest := index . 0 }}
{{- $udp := index . 1 }}
{{- range $p := $dest.ports }}
- port: {{ $p }}
  protocol: TCP
{{- if $udp }}
- port: {{ $p }}
  protocol: UDP
{{- end }}
{{- end }}
{{- end }}
