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
