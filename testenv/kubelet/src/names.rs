//! What cluster DNS would do for the pods the harness runs. There is no pod network here:
//! a replica-set member the harness runs listens on a loopback address of its own (its pod
//! IP), and the runner it starts later reaches it by the name the operator gave it,
//! `<hostname>.<subdomain>.<namespace>.svc.cluster.local` (a headless Service's name for a
//! pod). Before a process starts, the harness writes each such name in its environment,
//! arguments and mounted files as the pod IP it stands for, keeping the port, as a resolver
//! would at connection time. SecantusDB advertises the fixed replica-set name `secantus`,
//! not the `--replSet` name mongod would have been given, so `replicaSet=<that name>` in a
//! connection string becomes `replicaSet=secantus` as well.

use std::collections::BTreeMap;

/// The replica-set name SecantusDB advertises in `hello`, whatever it is started with.
pub const SECANTUS_SET: &str = "secantus";

/// The names of the members the harness runs: DNS names to pod IPs, and the `--replSet`
/// names they were started with to the name their server advertises.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    hosts: BTreeMap<String, String>,
    sets: BTreeMap<String, String>,
}

/// The name a headless Service gives a pod: `<hostname>.<subdomain>.<namespace>.svc.cluster.local`.
pub fn pod_dns_name(hostname: &str, subdomain: &str, namespace: &str) -> String {
    format!("{hostname}.{subdomain}.{namespace}.svc.cluster.local")
}

/// Characters of a host name: a name is replaced only where none of them touches it.
fn host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_'
}

/// `text` with every whole occurrence of `from` (not touched by a `part` character on either
/// side) replaced by `to`.
fn replace_whole(text: &str, from: &str, to: &str, part: fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(part) || after.is_some_and(part) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

impl Names {
    /// Records that `dns_name` resolves to `ip`.
    pub fn add_host(&mut self, dns_name: String, ip: String) {
        self.hosts.insert(dns_name, ip);
    }

    /// Records that a member started with `--replSet <set>` advertises `advertised`.
    pub fn add_set(&mut self, set: String, advertised: String) {
        self.sets.insert(set, advertised);
    }

    /// Forgets `dns_name` (its pod is gone).
    pub fn remove_host(&mut self, dns_name: &str) {
        self.hosts.remove(dns_name);
    }

    /// `text` with the recorded names written as what they stand for.
    pub fn rewrite(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (name, ip) in &self.hosts {
            out = replace_whole(&out, name, ip, host_char);
        }
        for (set, advertised) in &self.sets {
            let from = format!("replicaSet={set}");
            let to = format!("replicaSet={advertised}");
            out = replace_whole(&out, &from, &to, host_char);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        let mut n = Names::default();
        n.add_host(pod_dns_name("b-t-p-0", "b-t-p", "ns"), "127.3.0.7".into());
        n.add_host(pod_dns_name("b-t-p-1", "b-t-p", "ns"), "127.3.0.8".into());
        n.add_set("b-t-p".into(), SECANTUS_SET.into());
        n
    }

    #[test]
    fn member_names_in_a_connection_string_become_pod_ips_and_the_set_secantus() {
        let uri = "mongodb://u:p@b-t-p-0.b-t-p.ns.svc.cluster.local:27017,\
                   b-t-p-1.b-t-p.ns.svc.cluster.local:27017/?replicaSet=b-t-p&authSource=admin";
        assert_eq!(
            names().rewrite(uri),
            "mongodb://u:p@127.3.0.7:27017,127.3.0.8:27017/?replicaSet=secantus&authSource=admin"
        );
        assert_eq!(
            names().rewrite("mongodb://b-t-p-0.b-t-p.ns.svc.cluster.local:27017/?replicaSet=b-t-p"),
            "mongodb://127.3.0.7:27017/?replicaSet=secantus"
        );
    }

    #[test]
    fn plan_members_become_pod_ips_and_other_names_stay() {
        let plan = "initiateMembers:\n- b-t-p-0.b-t-p.ns.svc.cluster.local:27017\n\
                    replicaSetName: b-t-p\nfacts:\n  members:\n  - member: b-t-p-0.b-t-p.ns.svc.cluster.local:27017\n";
        assert_eq!(
            names().rewrite(plan),
            "initiateMembers:\n- 127.3.0.7:27017\nreplicaSetName: b-t-p\nfacts:\n  members:\n  - member: 127.3.0.7:27017\n"
        );
        // Only whole names: a longer name that ends or starts like a known one is not a member
        // of it, nor is another namespace's or another set's.
        for other in [
            "x-b-t-p-0.b-t-p.ns.svc.cluster.local:27017",
            "b-t-p-0.b-t-p.ns.svc.cluster.local.example:27017",
            "b-t-p-0.b-t-p.ns2.svc.cluster.local:27017",
            "b-t-p-10.b-t-p.ns.svc.cluster.local:27017",
            "mongodb://h/?replicaSet=b-t-p-2",
        ] {
            assert_eq!(names().rewrite(other), other);
        }
        assert_eq!(Names::default().rewrite("anything"), "anything");
    }

    #[test]
    fn a_gone_member_no_longer_resolves() {
        let mut n = names();
        let name = pod_dns_name("b-t-p-0", "b-t-p", "ns");
        n.remove_host(&name);
        assert_eq!(n.rewrite(&format!("{name}:27017")), format!("{name}:27017"));
    }
}
