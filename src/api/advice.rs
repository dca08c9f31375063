//! Advice on a valid spec: settings the API accepts that are known to add noise to the figures,
//! or to ask a question the figures cannot answer. `mongobench validate` prints each as a note
//! and still exits 0; the result is the user's call.
//!
//! A fixed-rate workload (`workload.targetOpsPerSecond`) below every target's knee runs every
//! target at that rate: throughput is equal by construction, so a verdict on it says nothing,
//! and the verdict belongs to CPU per operation and latency.
//!
//! The QoS of the provisioned members: Kubernetes gives a pod Guaranteed QoS
//! only when every container (the keyfile init container gets mongod's resources) has CPU and
//! memory limits equal to its requests: a Burstable or BestEffort member shares its node's CPU
//! by weight and is evicted first under memory pressure. The kubelet's static CPU manager policy
//! gives exclusive cores only to Guaranteed containers with a whole number of CPUs; without
//! them the kernel moves mongod's threads among cores that other pods use too.

use super::replica_set::ComputeResources;
use super::spec::MongoBenchmarkSpec;
use super::units::parse_quantity_millis;
use super::verdict::VerdictMetric;

/// One piece of advice: the field it is about and what to change, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// Field path from the document root, e.g. `spec.replicaSet.resources`.
    pub path: String,
    /// What the setting does to the measurement, and what to set instead.
    pub message: String,
}

/// The QoS class Kubernetes gives a provisioned member, from its resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberQos {
    /// No CPU or memory request or limit.
    BestEffort,
    /// Some requests or limits, but not CPU and memory limits equal to their requests; the
    /// reason names the first resource that falls short.
    Burstable(String),
    /// CPU and memory limits equal to their requests; `whole_cpus` when the CPU is a whole
    /// number of cores (what the static CPU manager pins).
    Guaranteed { whole_cpus: bool },
}

impl MemberQos {
    /// The class of a container with `resources` (`None`: none set). A request left out
    /// defaults to its limit, as the API server defaults it.
    pub fn of(resources: Option<&ComputeResources>) -> MemberQos {
        let Some(r) = resources.filter(|r| !r.requests.is_empty() || !r.limits.is_empty()) else {
            return MemberQos::BestEffort;
        };
        for name in ["cpu", "memory"] {
            let Some(limit) = r.limits.get(name) else {
                return MemberQos::Burstable(format!("no {name} limit"));
            };
            let request = r.requests.get(name).unwrap_or(limit);
            if !same_quantity(&request.0, &limit.0) {
                return MemberQos::Burstable(format!(
                    "{name} request {} differs from its limit {}",
                    request.0, limit.0
                ));
            }
        }
        let whole_cpus = r
            .limits
            .get("cpu")
            .and_then(|q| parse_quantity_millis(&q.0).ok())
            .is_some_and(|m| m > 0 && m % 1000 == 0);
        MemberQos::Guaranteed { whole_cpus }
    }
}

/// Equal quantities, however written (`1` and `1000m`, `1Gi` and `1024Mi`); unparsable ones
/// (the schema refuses them) compare as text.
fn same_quantity(a: &str, b: &str) -> bool {
    match (parse_quantity_millis(a), parse_quantity_millis(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Every piece of advice on `spec`, in field order. A spec that provisions no server gets none
/// from the member rule: its servers' resources are not the benchmark's to set.
pub fn advice(spec: &MongoBenchmarkSpec) -> Vec<Advice> {
    let mut out = member_qos(spec);
    out.extend(fixed_rate_throughput(spec));
    out
}

/// A fixed-rate workload that declares throughput as a verdict metric.
fn fixed_rate_throughput(spec: &MongoBenchmarkSpec) -> Option<Advice> {
    let rate = spec.workload.target_ops_per_second()?;
    if !spec.verdict_metrics().contains(&VerdictMetric::Throughput) {
        return None;
    }
    Some(Advice {
        path: "spec.verdict.metrics".to_owned(),
        message: format!(
            "throughput is a verdict metric, but workload.targetOpsPerSecond fixes the rate at \
             {rate} ops/s: below every target's knee each achieves it, so throughput is equal \
             by construction and its verdict says nothing; declare the figures that differ \
             (metrics: [cpuPerOperation, p99Latency])"
        ),
    })
}

fn member_qos(spec: &MongoBenchmarkSpec) -> Vec<Advice> {
    let mut out = Vec::new();
    if spec.provisions_servers() {
        let rs = spec.replica_set();
        let path = "spec.replicaSet.resources";
        let fix = "set requests equal to limits, CPU in whole cores (e.g. cpu: \"4\", memory: \
                   16Gi), for Guaranteed QoS and, under the kubelet's static CPU manager policy, \
                   cores of their own";
        let message = match MemberQos::of(rs.resources.as_ref()) {
            MemberQos::BestEffort => Some(format!(
                "unset: the members run BestEffort, sharing CPU with whatever else runs on \
                 their nodes and evicted first; {fix}"
            )),
            MemberQos::Burstable(why) => Some(format!(
                "{why}: the members run Burstable and share their nodes' CPU by weight; {fix}"
            )),
            MemberQos::Guaranteed { whole_cpus: false } => Some(format!(
                "cpu {} is not a whole number of cores: the members are Guaranteed, but the \
                 static CPU manager pins only whole cores, so their threads move among cores \
                 other pods use; {fix}",
                rs.resources
                    .as_ref()
                    .and_then(|r| r.limits.get("cpu"))
                    .map_or("?", |q| q.0.as_str())
            )),
            MemberQos::Guaranteed { whole_cpus: true } => None,
        };
        out.extend(message.map(|message| Advice {
            path: path.to_owned(),
            message,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(yaml: &str) -> ComputeResources {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn qos(yaml: &str) -> MemberQos {
        MemberQos::of(Some(&resources(yaml)))
    }

    #[test]
    fn qos_follows_the_kubernetes_rules() {
        assert_eq!(MemberQos::of(None), MemberQos::BestEffort);
        assert_eq!(qos("{}"), MemberQos::BestEffort);
        assert_eq!(
            qos("{limits: {cpu: '4', memory: 16Gi}}"),
            MemberQos::Guaranteed { whole_cpus: true }
        );
        // Equal however written.
        assert_eq!(
            qos("{requests: {cpu: 4000m, memory: 16384Mi}, limits: {cpu: '4', memory: 16Gi}}"),
            MemberQos::Guaranteed { whole_cpus: true }
        );
        assert_eq!(
            qos("{requests: {cpu: 1500m, memory: 6Gi}, limits: {cpu: 1500m, memory: 6Gi}}"),
            MemberQos::Guaranteed { whole_cpus: false }
        );
        assert_eq!(
            qos("{requests: {cpu: '2', memory: 8Gi}, limits: {cpu: '4', memory: 8Gi}}"),
            MemberQos::Burstable("cpu request 2 differs from its limit 4".into())
        );
        assert_eq!(
            qos("{requests: {cpu: '4', memory: 8Gi}}"),
            MemberQos::Burstable("no cpu limit".into())
        );
        assert_eq!(
            qos("{limits: {cpu: '4'}}"),
            MemberQos::Burstable("no memory limit".into())
        );
    }

    fn spec(replica_set: &str) -> MongoBenchmarkSpec {
        serde_yaml::from_str(&format!(
            "{{targets: [{{name: a, image: 'mongo:8.0'}}, {{name: b, image: 'mongo:7.0'}}], \
             platforms: [{{name: x86}}], workload: {{type: flights}}, dataset: {{sizes: [1k]}}, \
             replicaSet: {replica_set}}}"
        ))
        .unwrap()
    }

    #[test]
    fn advice_names_the_field_and_the_fix() {
        let fix = "set requests equal to limits, CPU in whole cores (e.g. cpu: \"4\", memory: \
                   16Gi), for Guaranteed QoS and, under the kubelet's static CPU manager policy, \
                   cores of their own";
        assert_eq!(
            advice(&spec("{storageSize: 1Gi}")),
            [Advice {
                path: "spec.replicaSet.resources".into(),
                message: format!(
                    "unset: the members run BestEffort, sharing CPU with whatever else runs on \
                     their nodes and evicted first; {fix}"
                ),
            }]
        );
        assert_eq!(
            advice(&spec(
                "{storageSize: 1Gi, resources: {requests: {cpu: '2', memory: 8Gi}, \
                 limits: {cpu: '4', memory: 8Gi}}}"
            ))[0]
                .message,
            format!(
                "cpu request 2 differs from its limit 4: the members run Burstable and share \
                 their nodes' CPU by weight; {fix}"
            )
        );
        assert_eq!(
            advice(&spec(
                "{storageSize: 1Gi, resources: {limits: {cpu: 1500m, memory: 6Gi}}}"
            ))[0]
                .message,
            format!(
                "cpu 1500m is not a whole number of cores: the members are Guaranteed, but the \
                 static CPU manager pins only whole cores, so their threads move among cores \
                 other pods use; {fix}"
            )
        );
        assert!(
            advice(&spec(
                "{storageSize: 1Gi, resources: {limits: {cpu: '3', memory: 12Gi}}}"
            ))
            .is_empty()
        );
    }

    fn external(workload: &str, verdict: &str) -> MongoBenchmarkSpec {
        serde_yaml::from_str(&format!(
            "{{targets: [{{name: a, external: {{uriSecretRef: {{name: s}}}}}}, \
             {{name: b, external: {{uriSecretRef: {{name: s}}}}}}], platforms: [{{name: x86}}], \
             workload: {workload}, dataset: {{sizes: [1k]}}{verdict}}}"
        ))
        .unwrap()
    }

    #[test]
    fn a_fixed_rate_spec_that_declares_throughput_is_warned() {
        let fixed = "{type: flights, targetOpsPerSecond: 2000}";
        let expected = [Advice {
            path: "spec.verdict.metrics".into(),
            message: "throughput is a verdict metric, but workload.targetOpsPerSecond fixes the \
                      rate at 2000 ops/s: below every target's knee each achieves it, so \
                      throughput is equal by construction and its verdict says nothing; declare \
                      the figures that differ (metrics: [cpuPerOperation, p99Latency])"
                .into(),
        }];
        // Throughput by default, and declared.
        assert_eq!(advice(&external(fixed, "")), expected);
        assert_eq!(
            advice(&external(
                fixed,
                ", verdict: {metrics: [cpuPerOperation, throughput]}"
            )),
            expected
        );
        // Not when it is not declared, nor in a closed loop.
        assert!(
            advice(&external(
                fixed,
                ", verdict: {metrics: [cpuPerOperation, p99Latency]}"
            ))
            .is_empty()
        );
        assert!(advice(&external("{type: flights}", "")).is_empty());
    }
}
