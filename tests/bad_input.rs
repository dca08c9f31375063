//! Bad input of every kind the CLI reads, through the built binary: manifests (`validate -f`,
//! `run -f`), plan files (`run --plan`) and result directories (`report --dir` and `verify`).
//! No cluster or server is needed: every refusal comes before anything connects.
//!
//! The contract (docs/reliability-inputs.md): exit code 2 and exactly one line. `validate`
//! prints it on standard output (its report); the other subcommands on standard error as
//! `mongobench <subcommand>: <message>`, nothing on standard output. The line starts with the
//! file (`FILE:LINE: ` when the mistake has a line) and names the field or says what was
//! expected.
//!
//! Fixtures: `tests/fixtures/bad-input/manifests/` and `plans/` (each one mistake away from the
//! `valid.yaml` beside it, which is accepted), the schema-level manifests of
//! `tests/fixtures/invalid/` numbered from 40 (their header names the field), and result
//! directories built here from real result documents. Large files are generated, not committed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "bad_input/results_dirs.rs"]
mod results_dirs;

/// The invalid corpus before this suite: files numbered up to here are counted elsewhere.
const EARLIER_CORPUS: u32 = 39;
/// New kinds of bad input this suite must cover, at least.
const REQUIRED_KINDS: usize = 40;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("mongobench-bad-input-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmd {
    /// `validate -f FILE`.
    Validate,
    /// `run -f FILE --target ...`.
    RunSpec,
    /// `run --plan FILE`.
    RunPlan,
    /// `report --dir DIR` and `verify DIR`, each.
    Results,
}

/// What a case runs on and what its refusal must say.
struct Made {
    /// The argument given to the subcommand.
    arg: PathBuf,
    /// The file the refusal must start with.
    names: PathBuf,
    /// The line it must name, if any.
    line: Option<usize>,
}

enum Input {
    /// A committed file under tests/fixtures/bad-input/, with the line its refusal names.
    Fixture(&'static str, Option<usize>),
    /// Built in a scratch directory.
    Made(fn(&Path) -> Made),
}

struct Case {
    kind: &'static str,
    cmd: Cmd,
    input: Input,
    /// Words the refusal must contain after the file and line: the field, what was expected.
    says: &'static [&'static str],
}

const fn case(kind: &'static str, cmd: Cmd, input: Input, says: &'static [&'static str]) -> Case {
    Case {
        kind,
        cmd,
        input,
        says,
    }
}

use Cmd::*;
use Input::{Fixture, Made as Make};
use results_dirs::*;

#[rustfmt::skip] // a table: one case a line
fn cases() -> Vec<Case> {
    vec![
        // YAML that does not parse, or parses into what a Kubernetes object cannot hold.
        case("yaml-unclosed-quote", Validate, Fixture("manifests/yaml-unclosed-quote.yaml", Some(4)), &["invalid YAML", "quote"]),
        case("yaml-unclosed-bracket", Validate, Fixture("manifests/yaml-unclosed-bracket.yaml", Some(18)), &["invalid YAML", "[ or {"]),
        case("yaml-bad-indentation", Validate, Fixture("manifests/yaml-bad-indentation.yaml", Some(19)), &["invalid YAML"]),
        case("yaml-tab-indentation", Validate, Fixture("manifests/yaml-tab-indentation.yaml", Some(19)), &["a tab in the indentation"]),
        case("yaml-duplicate-key", Validate, Fixture("manifests/yaml-duplicate-key.yaml", Some(21)), &["spec.workload.duration", "duplicate key", "line 20"]),
        case("yaml-missing-colon", Validate, Fixture("manifests/yaml-missing-colon.yaml", Some(20)), &["invalid YAML", "':'"]),
        case("yaml-unknown-alias", Validate, Fixture("manifests/yaml-unknown-alias.yaml", Some(19)), &["unknown anchor"]),
        case("yaml-alias-bomb", Validate, Fixture("manifests/yaml-alias-bomb.yaml", Some(26)), &["aliases expand to too many nodes"]),
        case("yaml-deep-nesting", Validate, Fixture("manifests/yaml-deep-nesting.yaml", Some(19)), &["recursion limit"]),
        case("yaml-custom-tag", Validate, Fixture("manifests/yaml-custom-tag.yaml", Some(19)), &["spec.workload.workers", "YAML tag"]),
        case("yaml-nan", Validate, Fixture("manifests/yaml-nan.yaml", Some(19)), &["spec.workload.workers", ".nan", "finite number"]),
        case("yaml-infinity", Validate, Fixture("manifests/yaml-infinity.yaml", Some(21)), &["spec.repetitions", ".inf", "finite number"]),
        case("control-character", Validate, Fixture("manifests/control-character.yaml", Some(4)), &["control character U+0007"]),
        case("not-utf8", Validate, Fixture("manifests/not-utf8.yaml", Some(4)), &["not UTF-8", "0xe9"]),
        // Numbers no field can hold.
        case("number-beyond-u64", Validate, Fixture("manifests/number-beyond-u64.yaml", Some(19)), &["spec.workload.workers", "64 bits"]),
        case("number-beyond-int64", Validate, Fixture("manifests/number-beyond-int64.yaml", Some(20)), &["spec.workload.operations", "at most 9223372036854775807"]),
        case("number-1e400", Validate, Fixture("manifests/number-1e400.yaml", Some(21)), &["spec.repetitions", "must be an integer"]),
        // Files that hold no MongoBenchmark, or not one a file may hold.
        case("empty-file", Validate, Fixture("manifests/empty.yaml", None), &["empty", "apiVersion mongobench.io/v1alpha1"]),
        case("only-comments", Validate, Fixture("manifests/only-comments.yaml", None), &["only comments", "kind MongoBenchmark"]),
        case("only-other-kinds", Validate, Fixture("manifests/only-other-kinds.yaml", None), &["no MongoBenchmark in it"]),
        case("json-not-a-benchmark", Validate, Fixture("manifests/not-a-benchmark.json", Some(1)), &["kind: required field is missing"]),
        case("json-list", Validate, Fixture("manifests/json-list.json", Some(1)), &["a list, not a Kubernetes object"]),
        case("document-not-a-mapping", Validate, Fixture("manifests/document-not-a-mapping.yaml", Some(24)), &["document 2", "a string, not a Kubernetes object"]),
        case("two-benchmarks-same-name", Validate, Fixture("manifests/two-benchmarks-same-name.yaml", Some(27)), &["metadata.name", "second MongoBenchmark named \"bad-input\""]),
        case("wrong-api-version", Validate, Fixture("manifests/wrong-api-version.yaml", Some(1)), &["apiVersion: must be mongobench.io/v1alpha1"]),
        case("wrong-kind", Validate, Fixture("manifests/wrong-kind.yaml", Some(2)), &["kind: must be MongoBenchmark"]),
        case("manifest-too-large", Validate, Make(too_large_manifest), &["10485760 bytes", "1 MiB"]),
        case("manifest-missing", Validate, Make(missing_manifest), &["no such file", "manifest"]),
        case("manifest-is-a-directory", Validate, Make(directory_manifest), &["is a directory"]),
        case("run-several-benchmarks", RunSpec, Fixture("manifests/two-benchmarks.yaml", None), &["holds 2 MongoBenchmarks", "run takes one"]),
        case("run-spec-violation", RunSpec, Make(run_spec_violation), &["spec.workload.workers", "at least 1"]),
        // Plan files.
        case("plan-other-version", RunPlan, Fixture("plans/other-version.yaml", Some(1)), &["planVersion", "1 is not a version", "(2)"]),
        case("plan-without-version", RunPlan, Fixture("plans/without-version.yaml", Some(1)), &["planVersion: required field is missing"]),
        case("plan-not-yaml", RunPlan, Fixture("plans/not-yaml.toml", Some(3)), &["invalid YAML"]),
        case("plan-is-a-manifest", RunPlan, Fixture("plans/is-a-manifest.yaml", Some(2)), &["MongoBenchmark manifest, not a plan", "run -f"]),
        case("plan-missing-field", RunPlan, Fixture("plans/missing-field.yaml", Some(1)), &["runId: required field is missing"]),
        case("plan-wrong-type", RunPlan, Fixture("plans/wrong-type.yaml", Some(6)), &["targets", "expected a sequence"]),
        case("plan-invalid-run", RunPlan, Fixture("plans/invalid-run.yaml", Some(56)), &["run.settings.workers", "at least 1"]),
        case("plan-no-targets", RunPlan, Fixture("plans/no-targets.yaml", Some(6)), &["targets", "at least one target"]),
        case("plan-duplicate-target", RunPlan, Fixture("plans/duplicate-target.yaml", Some(9)), &["targets[1].name", "given twice"]),
        case("plan-empty", RunPlan, Fixture("plans/empty.yaml", None), &["empty", "planVersion: 2"]),
        case("plan-two-documents", RunPlan, Fixture("plans/two-documents.yaml", Some(79)), &["2 YAML documents"]),
        case("plan-missing", RunPlan, Make(missing_plan), &["no such file", "plan"]),
        // Result directories.
        case("results-dir-missing", Results, Make(results_dir_missing), &["no such directory", "--out directory"]),
        case("results-dir-empty", Results, Make(results_dir_empty), &["no result documents"]),
        case("results-dir-is-a-file", Results, Make(results_dir_is_a_file), &["not a directory"]),
        case("results-only-renderings", Results, Make(results_only_renderings), &["results.csv and report.txt", "documents are missing"]),
        case("results-listed-cell-missing", Results, Make(results_listed_cell_missing), &["lists cell", "repetition=2", ".r2.json is missing"]),
        case("results-truncated", Results, Make(results_truncated), &["not JSON", "truncated"]),
        case("results-field-wrong-type", Results, Make(results_field_wrong_type), &["measured.overall.opsPerSec", "invalid type: string"]),
        case("results-negative-count", Results, Make(results_negative_count), &["measured.overall.completed", "-5"]),
        case("results-histogram-garbage", Results, Make(results_histogram_garbage), &["histogram", "not base64"]),
        case("results-other-schema-version", Results, Make(results_other_schema_version), &["schemaVersion 1", "reads schemaVersion 2"]),
        case("results-not-a-result", Results, Make(results_not_a_result), &["no integer `schemaVersion`"]),
        case("results-json-array", Results, Make(results_json_array), &["an array, not a result document"]),
        case("results-not-json", Results, Make(results_not_json), &["not JSON"]),
        case("results-trailing-text", Results, Make(results_trailing_text), &["not JSON", "trailing characters"]),
        case("results-empty-file", Results, Make(results_empty_file), &["empty", "result document"]),
        case("results-missing-field", Results, Make(results_missing_field), &["missing field `cell`"]),
        case("results-duplicate-key", Results, Make(results_duplicate_key), &["duplicate field `fingerprint`"]),
        case("results-broken-invariant", Results, Make(results_broken_invariant), &["says complete but has no `measured`"]),
        case("results-not-utf8", Results, Make(results_not_utf8), &["not UTF-8"]),
        case("results-duplicate-cell", Results, Make(results_duplicate_cell), &["holds the same cell as"]),
        case("results-dangling-link", Results, Make(results_dangling_link), &["symbolic link", "does not exist"]),
        case("results-too-large", Results, Make(results_too_large), &["10485760 bytes", "4 MiB"]),
    ]
}

// --- manifests and plans made here ---

fn too_large_manifest(dir: &Path) -> Made {
    // A 10 MB manifest: refused from its size, without being read.
    let path = dir.join("huge.yaml");
    let valid =
        std::fs::read_to_string(repo("tests/fixtures/bad-input/manifests/valid.yaml")).unwrap();
    let mut text = valid.clone();
    while text.len() < 10 << 20 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    text.truncate(10 << 20);
    std::fs::write(&path, text).unwrap();
    made(path, None)
}

fn missing_manifest(dir: &Path) -> Made {
    made(dir.join("no-such-benchmark.yaml"), None)
}

fn directory_manifest(dir: &Path) -> Made {
    made(dir.to_path_buf(), None)
}

fn run_spec_violation(_: &Path) -> Made {
    let path = repo("tests/fixtures/invalid/45-workers-negative.yaml");
    made(path, Some(29))
}

fn missing_plan(dir: &Path) -> Made {
    made(dir.join("plan.yaml"), None)
}

fn made(path: PathBuf, line: Option<usize>) -> Made {
    Made {
        arg: path.clone(),
        names: path,
        line,
    }
}

// --- running ---

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn mongobench(args: &[&std::ffi::OsStr]) -> Outcome {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(args)
        .env("RUST_LOG", "error")
        .env_remove("MONGOBENCH_TARGET_URI")
        .output()
        .expect("mongobench runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: start.elapsed(),
    }
}

fn invocations(cmd: Cmd, arg: &Path) -> Vec<(&'static str, Vec<std::ffi::OsString>)> {
    let arg = arg.as_os_str().to_owned();
    match cmd {
        Validate => vec![("validate", vec!["validate".into(), "-f".into(), arg])],
        RunSpec => vec![(
            "run",
            vec![
                "run".into(),
                "-f".into(),
                arg,
                "--target".into(),
                "t=mongodb://127.0.0.1:1/".into(),
            ],
        )],
        RunPlan => vec![("run", vec!["run".into(), "--plan".into(), arg])],
        Results => vec![
            ("report", vec!["report".into(), "--dir".into(), arg.clone()]),
            ("verify", vec!["verify".into(), arg]),
        ],
    }
}

/// Runs `case` and returns what is wrong with its refusal, if anything.
fn check(case: &Case, dir: &Path) -> Vec<String> {
    let made = match &case.input {
        Fixture(file, line) => made_fixture(file, *line),
        Make(build) => build(dir),
    };
    let mut failures = Vec::new();
    for (name, args) in invocations(case.cmd, &made.arg) {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let out = mongobench(&args);
        let fail = |why: String| format!("{} ({name}): {why}", case.kind);
        if out.code != 2 {
            failures.push(fail(format!(
                "exit code {}, expected 2\n{}{}",
                out.code, out.stdout, out.stderr
            )));
            continue;
        }
        // The one line, on the stream of the subcommand's refusals.
        let (stream, other, prefix) = if case.cmd == Validate {
            (&out.stdout, &out.stderr, String::new())
        } else {
            (&out.stderr, &out.stdout, format!("mongobench {name}: "))
        };
        if !other.is_empty() || stream.lines().count() != 1 {
            failures.push(fail(format!(
                "expected exactly one line\nstdout:\n{}stderr:\n{}",
                out.stdout, out.stderr
            )));
            continue;
        }
        let line = stream.trim_end_matches('\n');
        let Some(rest) = line.strip_prefix(&prefix) else {
            failures.push(fail(format!("no {prefix:?} prefix: {line}")));
            continue;
        };
        let file = made.names.display().to_string();
        let at = match made.line {
            Some(n) => format!("{file}:{n}: "),
            None => format!("{file}: "),
        };
        let Some(message) = rest.strip_prefix(&at) else {
            failures.push(fail(format!("does not start with {at:?}: {line}")));
            continue;
        };
        for word in case.says {
            if !message.contains(word) {
                failures.push(fail(format!("does not say {word:?}: {line}")));
            }
        }
        if out.took > Duration::from_secs(10) {
            failures.push(fail(format!("took {:?}", out.took)));
        }
    }
    failures
}

fn made_fixture(file: &str, line: Option<usize>) -> Made {
    made(repo(&format!("tests/fixtures/bad-input/{file}")), line)
}

/// The schema-level manifests added to tests/fixtures/invalid/ with this suite: (file, the
/// field their header names).
fn new_invalid_specs() -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(repo("tests/fixtures/invalid"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.split('-')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n > EARLIER_CORPUS)
        })
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let expect = text
                .lines()
                .next()
                .unwrap()
                .strip_prefix("# expect: ")
                .unwrap();
            let expect = expect.trim().to_string();
            (p, expect)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn at_least_40_new_kinds_of_bad_input_are_covered() {
    let cases = cases();
    let mut kinds: Vec<String> = cases.iter().map(|c| c.kind.to_string()).collect();
    kinds.extend(
        new_invalid_specs()
            .iter()
            .map(|(p, _)| p.file_stem().unwrap().to_string_lossy().to_string()),
    );
    let total = kinds.len();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), total, "a kind is listed twice");
    assert!(
        total >= REQUIRED_KINDS,
        "{total} kinds of bad input, at least {REQUIRED_KINDS} expected"
    );
    // Every committed fixture is a case, so none is dead weight; valid.yaml is the control.
    for folder in ["manifests", "plans"] {
        for entry in std::fs::read_dir(repo(&format!("tests/fixtures/bad-input/{folder}"))).unwrap()
        {
            let name = format!("{folder}/{}", entry.unwrap().file_name().to_string_lossy());
            let used = cases
                .iter()
                .any(|c| matches!(c.input, Fixture(f, _) if f == name));
            assert!(used || name.ends_with("/valid.yaml"), "{name} is no case");
        }
    }
}

#[test]
fn the_fixtures_are_one_mistake_away_from_accepted_input() {
    // The manifest the fixtures are derived from validates...
    let valid = repo("tests/fixtures/bad-input/manifests/valid.yaml");
    let out = mongobench(&["validate".as_ref(), "-f".as_ref(), valid.as_os_str()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // ...the plan passes every check and stops only at the target's URI, which the Job's
    // environment would hold...
    let plan = repo("tests/fixtures/bad-input/plans/valid.yaml");
    let out = mongobench(&["run".as_ref(), "--plan".as_ref(), plan.as_os_str()]);
    assert_eq!(
        out.stderr,
        "mongobench run: MONGOBENCH_TARGET_URI is not set: the Job passes target mongodb-8.0's \
         URI in it\n"
    );
    // ...and a run directory as run --out writes it renders.
    let dir = scratch("control");
    run_out(&dir);
    let out = mongobench(&["report".as_ref(), "--dir".as_ref(), dir.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("mongodb-8.0"), "{}", out.stdout);
}

#[test]
fn every_kind_is_refused_with_exit_code_2_and_one_line_naming_file_and_line() {
    let mut failures = Vec::new();
    let cases = cases();
    let mut refused = 0;
    for case in &cases {
        let dir = scratch(case.kind);
        let failed = check(case, &dir);
        refused += usize::from(failed.is_empty());
        failures.extend(failed);
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Read by tests/reliability/report (with --show-output).
    println!(
        "reliability: bad input refused {refused} of {}",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_new_invalid_spec_gives_one_line_at_the_line_of_its_field() {
    let specs = new_invalid_specs();
    assert!(!specs.is_empty());
    let total = specs.len();
    let mut failures = Vec::new();
    for (path, expect) in specs {
        let out = mongobench(&["validate".as_ref(), "-f".as_ref(), path.as_os_str()]);
        let file = path.display().to_string();
        let lines: Vec<&str> = out.stdout.lines().collect();
        let [line] = lines.as_slice() else {
            failures.push(format!("{file}: {} lines:\n{}", lines.len(), out.stdout));
            continue;
        };
        if out.code != 2 || !out.stderr.is_empty() {
            failures.push(format!("{file}: exit {} {}", out.code, out.stderr));
            continue;
        }
        // FILE:LINE: FIELD: message, and line LINE of the file holds the field.
        let rest = line.strip_prefix(&format!("{file}:")).unwrap_or_default();
        let mut parts = rest.splitn(3, ": ");
        let (number, field) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if !field.starts_with(&expect) {
            failures.push(format!("{file}: names {field:?}, not {expect}: {line}"));
            continue;
        }
        let key = field.rsplit('.').next().unwrap().split('[').next().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let held = number
            .parse::<usize>()
            .ok()
            .and_then(|n| text.lines().nth(n - 1))
            .is_some_and(|l| l.contains(key));
        if !held {
            failures.push(format!(
                "{file}: line {number} does not hold {key:?}: {line}"
            ));
        }
    }
    // Read by tests/reliability/report (with --show-output); one failure per spec at most.
    println!(
        "reliability: bad input refused {} of {total}",
        total - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
