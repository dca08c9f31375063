//! What differs between the targets, named from the servers' own answers (docs/results.md,
//! "What differs"): a run against FerretDB on SQLite (a standalone) and SecantusDB (a
//! replica-set member with WiredTiger) records each server's distribution, engine and cache,
//! and every comparison names them and warns that the two differ in topology, not only in
//! version.
mod support;

const SPEC: &str = "\
apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: differs}
spec:
  targets:
  - {name: ferret, external: {uriSecretRef: {name: f}}}
  - {name: wt, external: {uriSecretRef: {name: w}}}
  baseline: ferret
  platforms: [{name: local}]
  dataset: {sizes: ['300']}
  workload: {type: ycsb, ycsb: {workload: c}, workers: 1, duration: 1s, warmup: 1s}
  repetitions: 3
";

#[test]
fn a_standalone_against_a_replica_set_member_is_named_and_warned_about() {
    let ferret = support::private_mongo_sqlite("differs-ferret");
    let wt = support::private_secantus("differs-wt");
    let dir = std::env::temp_dir().join(format!("mongobench-differs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("differs.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = dir.join("out");
    let (code, stdout, err) = support::mongobench(&[
        "run",
        "-f",
        spec.to_str().unwrap(),
        "--target",
        &format!("ferret={}", ferret.uri),
        "--target",
        &format!("wt={}", wt.uri),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");

    // Each result says whose server it was, from buildInfo and serverStatus.
    for r in support::runs::read_results(&out) {
        let s = &r.server;
        match r.cell.target.as_str() {
            "ferret" => {
                assert_eq!(s.distribution.as_deref(), Some("FerretDB"), "{s:?}");
                assert_eq!((s.storage_engine.as_deref(), s.cache_bytes), (None, None));
                assert_eq!(s.topology.as_deref(), Some("standalone"));
            }
            _ => {
                assert_eq!(s.distribution.as_deref(), Some("SecantusDB"), "{s:?}");
                assert_eq!(s.storage_engine.as_deref(), Some("wiredTiger"), "{s:?}");
                assert!(s.cache_bytes.is_some_and(|b| b > 0), "{s:?}");
                assert!(s.topology.as_deref().unwrap().starts_with("replicaSet"));
            }
        }
    }

    // The comparison document names both servers and warns beside wt's verdict.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("comparison.json")).unwrap())
            .unwrap();
    let rows = &doc["groups"][0]["rows"];
    assert_eq!(rows[0]["server"]["distribution"], "FerretDB", "{doc}");
    assert_eq!(rows[1]["server"]["distribution"], "SecantusDB", "{doc}");
    assert_eq!(rows[1]["server"]["storageEngine"], "wiredTiger", "{doc}");
    let warning = "differs from ferret in more than its version: topology replica set vs \
                   standalone; the difference measured includes these";
    assert!(
        rows[1]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == warning),
        "{doc}"
    );
    let headline = doc["headline"].as_str().unwrap();
    assert!(headline.contains("wt (SecantusDB 8.2.11)"), "{headline}");
    assert!(headline.contains("ferret (FerretDB 7.0.42)"), "{headline}");
    assert!(
        headline.ends_with("; they also differ in topology replica set vs standalone"),
        "{headline}"
    );

    // The text and Markdown reports say the same.
    let dir_arg = out.to_str().unwrap();
    let (code, text, err) = support::mongobench(&["report", "--dir", dir_arg]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("  wt: SecantusDB 8.2.11, replica set, wiredTiger"),
        "{text}"
    );
    assert!(text.contains(&format!("  !! wt: {warning}")), "{text}");
    let (code, md, err) = support::mongobench(&["report", "--dir", dir_arg, "-o", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("- ferret: FerretDB 7.0.42, standalone"), "{md}");
    std::fs::remove_dir_all(&dir).unwrap();
}
