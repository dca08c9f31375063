//! Whether a platform holds all its replica sets at once, so that one runner can run its
//! targets interleaved (specs: docs/operator.md, "Order"). Pure functions over what a pass
//! read of the platform's Nodes (`NodeCapacity`, from `observe/nodes.rs`).
//!
//! The rule is a capacity count, not a scheduler simulation, and errs on the side of running
//! one target after another:
//! - only nodes that match the platform's effective node selector (the list is filtered by
//!   it), are `Ready` and are not cordoned count; taints and tolerations are not looked at;
//! - a node takes at most as many members as its allocatable CPU, memory and pods allow for
//!   one member's requests (the requests, else the limits, as Kubernetes defaults them; a
//!   resource that is not requested does not limit), and at most one member of each replica
//!   set (required anti-affinity on `kubernetes.io/hostname`; members of different replica
//!   sets may share a node), so at most the number of replica sets;
//! - `k` replica sets of `m` members fit when these per-node counts add up to `k × m`. With
//!   every count at most `k` this is enough for a placement that puts each replica set's
//!   members on `m` different nodes (a node count `c` gives `min(c, t) ≥ c·t/k` for any
//!   `t ≤ k`, which is the Gale–Ryser condition for degrees `m` against capacities `c`); in
//!   particular it needs at least `m` nodes that take a member.
//!
//! What the nodes already run (other benchmarks, daemons) is not subtracted: the count is of
//! allocatable capacity.

use crate::api::ReplicaSet;
use crate::api::units::{UnitsError, parse_quantity_bytes, parse_quantity_millis};
use crate::operator::observe::NodeCapacity;

/// What one replica-set member asks of a node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberRequests {
    /// CPU as written in the spec, and in millicores.
    pub cpu: Option<(String, u64)>,
    /// Memory as written in the spec, and in bytes.
    pub memory: Option<(String, u64)>,
}

impl MemberRequests {
    /// The requests of each member of `rs`: `resources.requests`, else `resources.limits`
    /// (Kubernetes sets a missing request to the limit).
    ///
    /// # Errors
    /// [`UnitsError::Quantity`] when a quantity does not parse.
    pub fn of(rs: &ReplicaSet) -> Result<MemberRequests, UnitsError> {
        let Some(resources) = &rs.resources else {
            return Ok(MemberRequests::default());
        };
        let get = |name: &str| {
            resources
                .requests
                .get(name)
                .or_else(|| resources.limits.get(name))
                .map(|q| q.0.clone())
        };
        Ok(MemberRequests {
            cpu: get("cpu")
                .map(|q| parse_quantity_millis(&q).map(|m| (q, m)))
                .transpose()?,
            memory: get("memory")
                .map(|q| parse_quantity_bytes(&q).map(|b| (q, b)))
                .transpose()?,
        })
    }

    /// `cpu 3, memory 12Gi`, or `no cpu or memory requests`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [("cpu", &self.cpu), ("memory", &self.memory)]
            .into_iter()
            .filter_map(|(name, q)| q.as_ref().map(|(text, _)| format!("{name} {text}")))
            .collect();
        if parts.is_empty() {
            "no cpu or memory requests".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// How many of a platform's replica sets its nodes hold at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// Replica sets held at once, at most `wanted`.
    pub holds: u32,
    /// Replica sets to place.
    pub wanted: u32,
    /// Nodes that count (ready, not cordoned).
    pub nodes: usize,
}

impl Fit {
    /// True when every replica set fits at once.
    pub fn fits(&self) -> bool {
        self.holds >= self.wanted
    }
}

/// Members `node` takes for `requests`, at most `cap`.
fn members_on(node: &NodeCapacity, requests: &MemberRequests, cap: u32) -> u32 {
    let by = |allocatable: Option<u64>, request: Option<u64>| match request {
        None | Some(0) => u64::from(cap),
        Some(r) => allocatable.map_or(0, |a| a / r),
    };
    let n = by(node.cpu_millis, requests.cpu.as_ref().map(|c| c.1))
        .min(by(node.memory_bytes, requests.memory.as_ref().map(|m| m.1)))
        .min(node.pods.unwrap_or(u64::MAX))
        .min(u64::from(cap));
    u32::try_from(n).unwrap_or(cap)
}

/// How many of `replica_sets` replica sets of `members` members, each member requesting
/// `requests`, the `nodes` hold at once (the rule of this module).
pub fn fit(
    nodes: &[NodeCapacity],
    replica_sets: u32,
    members: u32,
    requests: &MemberRequests,
) -> Fit {
    let usable: Vec<&NodeCapacity> = nodes.iter().filter(|n| n.ready && n.schedulable).collect();
    let counts: Vec<u32> = usable
        .iter()
        .map(|n| members_on(n, requests, replica_sets))
        .collect();
    let holds = (0..=replica_sets)
        .rev()
        .find(|&t| {
            let room: u64 = counts.iter().map(|&c| u64::from(c.min(t))).sum();
            room >= u64::from(t) * u64::from(members)
        })
        .unwrap_or(0);
    Fit {
        holds,
        wanted: replica_sets,
        nodes: usable.len(),
    }
}

/// How many of `replica_sets` replica sets the `nodes` hold at once when they share their
/// nodes (`placement: SharedNodes`): member i of every set on one node, so `t` sets fit when
/// `members` nodes each take `t` members.
pub fn fit_shared(
    nodes: &[NodeCapacity],
    replica_sets: u32,
    members: u32,
    requests: &MemberRequests,
) -> Fit {
    let usable: Vec<&NodeCapacity> = nodes.iter().filter(|n| n.ready && n.schedulable).collect();
    let counts: Vec<u32> = usable
        .iter()
        .map(|n| members_on(n, requests, replica_sets))
        .collect();
    let holds = (0..=replica_sets)
        .rev()
        .find(|&t| counts.iter().filter(|&&c| c >= t).count() >= members as usize)
        .unwrap_or(0);
    Fit {
        holds,
        wanted: replica_sets,
        nodes: usable.len(),
    }
}

/// `platform n2-icelake holds 2 of 3 replica sets at once (3 ready nodes; 3 members each
/// requesting cpu 3, memory 12Gi)`.
pub fn describe(platform: &str, fit: &Fit, members: u32, requests: &MemberRequests) -> String {
    let held = if fit.fits() {
        format!("all {}", fit.wanted)
    } else {
        format!("{} of {}", fit.holds, fit.wanted)
    };
    let nodes = match fit.nodes {
        1 => "1 ready node".to_owned(),
        n => format!("{n} ready nodes"),
    };
    format!(
        "platform {platform} holds {held} replica sets at once ({nodes}; {members} members each, \
         one per node, each member {})",
        match requests.describe().as_str() {
            "no cpu or memory requests" => "without cpu or memory requests".to_owned(),
            r => format!("requesting {r}"),
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, cpu: u64, memory_gib: u64) -> NodeCapacity {
        NodeCapacity {
            name: name.into(),
            ready: true,
            schedulable: true,
            cpu_millis: Some(cpu * 1000),
            memory_bytes: Some(memory_gib << 30),
            pods: Some(110),
        }
    }

    fn pool(n: usize) -> Vec<NodeCapacity> {
        (0..n).map(|i| node(&format!("n2-{i}"), 4, 16)).collect()
    }

    fn requests(cpu: &str, memory: &str) -> MemberRequests {
        MemberRequests {
            cpu: Some((cpu.into(), parse_quantity_millis(cpu).unwrap())),
            memory: Some((memory.into(), parse_quantity_bytes(memory).unwrap())),
        }
    }

    #[test]
    fn without_requests_enough_nodes_fit() {
        let none = MemberRequests::default();
        assert_eq!(
            fit(&pool(3), 3, 3, &none),
            Fit {
                holds: 3,
                wanted: 3,
                nodes: 3
            }
        );
        // Fewer nodes than members: not even one replica set.
        assert_eq!(fit(&pool(2), 2, 3, &none).holds, 0);
        assert!(fit(&pool(1), 2, 1, &none).fits());
    }

    #[test]
    fn shared_nodes_need_members_nodes_that_each_take_a_member_of_every_set() {
        let half = requests("1500m", "6Gi");
        // 3 nodes of 4 CPUs take 2 members of 1.5 CPUs each: two sets share them.
        assert_eq!(fit_shared(&pool(3), 2, 3, &half).holds, 2);
        assert_eq!(fit_shared(&pool(3), 3, 3, &half).holds, 2);
        // Six nodes of room for one member each hold one shared set: no node takes two.
        let one = requests("3", "12Gi");
        assert_eq!(fit_shared(&pool(6), 2, 3, &one).holds, 1);
        assert!(fit(&pool(6), 2, 3, &one).fits());
        assert_eq!(
            fit_shared(&pool(2), 2, 3, &MemberRequests::default()).holds,
            0
        );
    }

    #[test]
    fn requests_limit_members_per_node() {
        // 4 CPU / 16 GiB nodes: 1.5 CPU members fit twice per node, 3 CPU members once.
        assert!(fit(&pool(3), 2, 3, &requests("1500m", "6Gi")).fits());
        assert_eq!(fit(&pool(3), 3, 3, &requests("1500m", "6Gi")).holds, 2);
        assert_eq!(fit(&pool(3), 3, 3, &requests("3", "12Gi")).holds, 1);
        // Memory limits too: 9 GiB members fit once per 16 GiB node.
        assert_eq!(fit(&pool(3), 2, 3, &requests("1", "9Gi")).holds, 1);
        // Six nodes take two 3-CPU replica sets.
        assert!(fit(&pool(6), 2, 3, &requests("3", "12Gi")).fits());
        // Anti-affinity: one member of each replica set per node, however big the node.
        let big = vec![node("big-0", 64, 256), node("big-1", 64, 256)];
        assert_eq!(fit(&big, 4, 3, &MemberRequests::default()).holds, 0);
        assert!(fit(&big, 4, 1, &MemberRequests::default()).fits());
    }

    #[test]
    fn unready_cordoned_and_unknown_nodes_do_not_count() {
        let mut nodes = pool(3);
        nodes[0].ready = false;
        assert_eq!(fit(&nodes, 2, 3, &MemberRequests::default()).nodes, 2);
        assert_eq!(fit(&nodes, 2, 3, &MemberRequests::default()).holds, 0);
        let mut nodes = pool(3);
        nodes[1].schedulable = false;
        assert!(!fit(&nodes, 1, 3, &MemberRequests::default()).fits());
        // A node that reports no allocatable CPU takes no member that requests CPU.
        let mut nodes = pool(3);
        nodes[2].cpu_millis = None;
        assert_eq!(fit(&nodes, 1, 3, &requests("1", "1Gi")).holds, 0);
        // Pods allocatable caps too.
        let mut nodes = pool(3);
        nodes[0].pods = Some(0);
        assert_eq!(fit(&nodes, 1, 3, &MemberRequests::default()).holds, 0);
    }

    #[test]
    fn heterogeneous_nodes_add_up() {
        // Two big nodes take two members each, two small ones one each: 6 = 2 × 3.
        let nodes = vec![
            node("a", 8, 32),
            node("b", 8, 32),
            node("c", 4, 16),
            node("d", 4, 16),
        ];
        assert!(fit(&nodes, 2, 3, &requests("3", "12Gi")).fits());
        // Three such replica sets would need 9 and the nodes take 6.
        assert_eq!(fit(&nodes, 3, 3, &requests("3", "12Gi")).holds, 2);
    }

    #[test]
    fn requests_default_to_limits_and_are_described() {
        let rs: ReplicaSet = serde_yaml::from_str(
            "resources: {requests: {cpu: '3'}, limits: {cpu: '3', memory: 12Gi}}",
        )
        .unwrap();
        let r = MemberRequests::of(&rs).unwrap();
        assert_eq!(r, requests("3", "12Gi"));
        assert_eq!(r.describe(), "cpu 3, memory 12Gi");
        let none = MemberRequests::of(&ReplicaSet::default()).unwrap();
        assert_eq!(none.describe(), "no cpu or memory requests");
        let f = fit(&pool(3), 2, 3, &r);
        assert_eq!(
            describe("n2-icelake", &f, 3, &r),
            "platform n2-icelake holds 1 of 2 replica sets at once (3 ready nodes; 3 members \
             each, one per node, each member requesting cpu 3, memory 12Gi)"
        );
        let f = fit(&pool(3), 2, 3, &none);
        assert_eq!(
            describe("n2-icelake", &f, 3, &none),
            "platform n2-icelake holds all 2 replica sets at once (3 ready nodes; 3 members \
             each, one per node, each member without cpu or memory requests)"
        );
    }
}
