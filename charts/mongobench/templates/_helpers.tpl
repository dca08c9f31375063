{{- define "mongobench.labels" -}}
app.kubernetes.io/name: mongobench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- define "mongobench.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- /* The port of /metrics when it is reachable from off the pod; empty when it is served on
loopback only or not at all. */ -}}
{{- define "mongobench.metricsPort" -}}
{{- $listen := .Values.metrics.listen | toString -}}
{{- if not (or (eq $listen "none") (eq $listen "") (hasPrefix "127." $listen) (hasPrefix "[::1]" $listen) (hasPrefix "localhost" $listen)) -}}
{{- last (splitList ":" $listen) -}}
{{- end -}}
{{- end }}
{{- /* The namespaces the operator watches, comma-separated: watchNamespaces, else the
release's own; none when it watches every namespace. */ -}}
{{- define "mongobench.watched" -}}
{{- if not .Values.clusterWide -}}
{{- if .Values.watchNamespaces }}{{ join "," .Values.watchNamespaces }}{{ else }}{{ .Release.Namespace }}{{ end -}}
{{- end -}}
{{- end }}
{{- /* The operator's rules in the namespaces of the benchmarks (manifests/rbac.yaml and
manifests/cluster-wide/rbac.yaml have the same; a test keeps them equal, and
tests/reliability/rbac.md says what each is for). */ -}}
{{- define "mongobench.operatorRules" -}}
# The benchmarks: listed and watched by the controller, read fresh by each pass, deleted once
# ttlSecondsAfterFinished has passed.
- apiGroups: [mongobench.io]
  resources: [mongobenchmarks]
  verbs: [get, list, watch, delete]
# Their status, by server-side apply (never their spec).
- apiGroups: [mongobench.io]
  resources: [mongobenchmarks/status]
  verbs: [patch]
# Servers, watched: read to check their owner before a change, created when missing, changed
# by server-side apply, deleted after their cells.
- apiGroups: [apps]
  resources: [statefulsets, deployments]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch, create, patch, delete]
# The servers' NetworkPolicies and budgets, not watched.
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, create, patch, delete]
# Runner Jobs, never deleted (their results outlive them).
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch]
# Plans (created, applied), the runners' results and activities (listed, watched), a custom
# workload's ConfigMap (read) and its copy (created).
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, patch]
# The runners' ServiceAccount, Role (configmaps, which the operator holds itself: RBAC grants
# only what the granter has) and RoleBinding.
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [get, create, patch]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, create, patch]
# Server and runner pods: scheduling problems, image pulls, termination messages, node facts.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
# The keyfile and admin Secrets of a benchmark whose replica sets use authentication:
# created once, never read, so no get, list or watch (no other Secret is readable).
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
# Pods that admission refused exist only as FailedCreate events of their StatefulSet or
# Job.
- apiGroups: [""]
  resources: [events]
  verbs: [list]
# Events on benchmarks; repeats are patched into a series.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# The benchmark's namespace, for the Secrets its annotation mongobench.io/readable-secrets
# lets benchmarks read (in a Role: that namespace only).
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get]
{{- end }}
