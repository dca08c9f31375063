//! `mongobench import plgm` as a user runs it: the fixture (plgm's file format, written for
//! these tests) becomes a custom workload file; unreadable or malformed inputs are refused in
//! one line naming the file, with exit code 2.

mod support;

use std::path::{Path, PathBuf};

use support::mongobench;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plgm");

/// `import plgm` of the fixture's collections with `queries`.
fn import_queries(queries: &Path) -> (i32, String, String) {
    mongobench(&[
        "import",
        "plgm",
        "--collections",
        &fixture("flights-collections.json"),
        "--queries",
        path_str(queries),
    ])
}

fn fixture(name: &str) -> String {
    format!("{FIXTURES}/{name}")
}

/// A fresh directory for one test's files.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mongobench-import-plgm-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_fixture_becomes_a_custom_workload_file() {
    let dir = temp_dir("ok");
    let out = dir.join("workload.yaml");
    let (code, stdout, stderr) = mongobench(&[
        "import",
        "plgm",
        "--collections",
        &fixture("flights-collections.json"),
        "--queries",
        &fixture("flights-queries.json"),
        "--out",
        path_str(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("note: faker providers become random lowercase strings"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!("wrote {}\n", out.display())),
        "{stderr}"
    );
    let yaml = std::fs::read_to_string(&out).unwrap();
    assert!(yaml.starts_with("# Imported from plgm's collection and query files"));
    for fragment in [
        "\nversion: 1\ndatabase: airline\ncollections:\n- name: flights\n  share: 1\n  fields:\n    flight_id:\n      int:\n        min: 0\n        max: 2147483647\n",
        "  - keys:\n      flight_id: 1\n      equipment.plane_type: 1\n",
        "  shardKey:\n    field: flight_id\n    type: hashed\n",
        "- name: find-0\n  class: find\n  weight: 360\n  find:\n    collection: flights\n    filter:\n      flight_id: '{{int}}'\n",
        "- name: update-one-3\n  class: updateOne\n  weight: 378\n",
        "- name: insert-many\n  class: insertMany\n  weight: 100\n  insert:\n    collection: flights\n    documents: 10\n",
        "phases:\n- name: plgm\n  duration: 10m\n",
        "generators:\n  int:\n    int:\n      min: 0\n      max: 999\n",
    ] {
        assert!(yaml.contains(fragment), "missing {fragment:?} in\n{yaml}");
    }
    // Without -o the document goes to standard output, the notes to standard error.
    let (code, stdout, stderr) = mongobench(&[
        "import",
        "plgm",
        "--queries",
        &fixture("flights-queries.json"),
        "--collections",
        &fixture("flights-collections.json"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, yaml);
    assert!(stderr.lines().all(|l| l.starts_with("note: ")), "{stderr}");
}

#[test]
fn missing_files_and_bad_json_are_refused_naming_the_file() {
    let dir = temp_dir("bad");
    let missing = dir.join("nope.json");
    let (code, stdout, stderr) = mongobench(&[
        "import",
        "plgm",
        "--collections",
        path_str(&missing),
        "--queries",
        &fixture("flights-queries.json"),
    ]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "mongobench import: {}: no such file (expected a plgm collections file)\n",
            missing.display()
        )
    );

    let bad = dir.join("queries.json");
    std::fs::write(&bad, "[\n  {\"operation\": \"find\"\n]\n").unwrap();
    let (code, _, stderr) = import_queries(&bad);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "mongobench import: {}: the queries file is not valid JSON: expected `,` or `}}` at line 3, column 1\n",
            bad.display()
        )
    );

    std::fs::write(
        &bad,
        r#"[{"collection": "flights", "operation": "upsertt"}]"#,
    )
    .unwrap();
    let (code, _, stderr) = import_queries(&bad);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "mongobench import: {}: queries[0].operation: unknown operation \"upsertt\"; expected \
             one of: find, updateOne, updateMany, deleteOne, deleteMany, aggregate\n",
            bad.display()
        )
    );
    assert!(!dir.join("workload.yaml").exists());
}
