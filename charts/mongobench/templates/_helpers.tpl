{{- define "mongobench.labels" -}}
app.kubernetes.io/name: mongobench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- define "mongobench.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end }}
