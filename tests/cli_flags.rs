//! The command line as a user meets it, through the built binary: one meaning per flag across
//! subcommands, `--dir` wherever results are read, `--kubeconfig`/`--context` wherever the
//! cluster is talked to, examples in every `--help`, shell completions, and the quick run
//! without a manifest (its `--dry-run` manifest validates, and it runs against a real server).
mod support;

use std::path::PathBuf;

use clap::CommandFactory;
use mongobench::cli::Cli;
use support::mongobench;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mongobench-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every subcommand, with its path (`import plgm`), depth first.
fn subcommands() -> Vec<(String, clap::Command)> {
    fn walk(prefix: &str, command: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        for sub in command.get_subcommands() {
            let path = format!("{prefix}{}", sub.get_name()).trim().to_owned();
            out.push((path.clone(), sub.clone()));
            walk(&format!("{path} "), sub, out);
        }
    }
    let mut out = Vec::new();
    walk("", &Cli::command(), &mut out);
    out
}

#[test]
fn every_subcommand_help_ends_with_examples_of_itself() {
    for (path, command) in subcommands() {
        // `import`'s examples are its one tool's.
        if command.get_subcommands().next().is_some() && path != "import" {
            continue;
        }
        let mut args: Vec<&str> = path.split(' ').collect();
        args.push("--help");
        let (code, out, err) = mongobench(&args);
        assert_eq!(code, 0, "{path} --help: {err}");
        let examples = out
            .split_once("Examples:\n")
            .unwrap_or_else(|| panic!("mongobench {path} --help has no examples:\n{out}"))
            .1;
        let top = path.split(' ').next().unwrap();
        assert!(
            examples
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("mongobench {top}"))),
            "mongobench {path} --help: no example runs it:\n{examples}"
        );
    }
}

#[test]
fn o_is_an_output_format_wherever_it_is_a_flag() {
    let mut with_o = Vec::new();
    for (path, command) in subcommands() {
        for arg in command
            .get_arguments()
            .filter(|a| a.get_short() == Some('o'))
        {
            assert_eq!(arg.get_long(), Some("output"), "mongobench {path} -o");
            assert!(
                !arg.get_possible_values().is_empty(),
                "mongobench {path} -o takes any value, not a format"
            );
            with_o.push(path.clone());
        }
    }
    assert_eq!(with_o, ["report", "get"]);
    // import plgm writes its file with --out only.
    let (code, _, err) = mongobench(&[
        "import",
        "plgm",
        "--collections",
        "c.json",
        "--queries",
        "q.json",
        "-o",
        "w.yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unexpected argument '-o'"), "{err}");
}

#[test]
fn results_are_read_with_dir_and_verify_still_takes_the_old_argument_with_a_warning() {
    for (path, command) in subcommands() {
        if matches!(path.as_str(), "report" | "plan" | "verify") {
            assert!(
                command.get_arguments().any(|a| a.get_long() == Some("dir")),
                "mongobench {path} has no --dir"
            );
        }
    }
    let missing = scratch("verify-dir").join("missing");
    let missing = missing.to_str().unwrap();
    let (code, _, err) = mongobench(&["verify", "--dir", missing]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(missing) && !err.contains("deprecated"),
        "{err}"
    );
    let (code, _, err) = mongobench(&["verify", missing]);
    assert_eq!(code, 2, "{err}");
    let mut lines = err.lines();
    assert_eq!(
        lines.next(),
        Some("mongobench verify: DIR as a plain argument is deprecated: use --dir DIR")
    );
    assert!(lines.next().is_some_and(|l| l.contains(missing)), "{err}");
    let (code, _, err) = mongobench(&["verify", "--dir", missing, missing]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn the_subcommands_that_talk_to_kubernetes_take_kubeconfig_and_context() {
    for (path, command) in subcommands() {
        let has = |flag: &str| command.get_arguments().any(|a| a.get_long() == Some(flag));
        let talks = matches!(path.as_str(), "operator" | "report" | "plan" | "get");
        assert_eq!(
            (has("kubeconfig"), has("context")),
            (talks, talks),
            "mongobench {path}"
        );
    }
    // A kubeconfig that is not there is named.
    let (code, _, err) = mongobench(&["get", "--kubeconfig", "/nonexistent/kubeconfig"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("mongobench get: --kubeconfig /nonexistent/kubeconfig: cannot be read"),
        "{err}"
    );
}

#[test]
fn completions_cover_every_subcommand_in_each_shell() {
    let (code, bash, err) = mongobench(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    for (path, _) in subcommands() {
        let name = path.rsplit(' ').next().unwrap();
        assert!(bash.contains(name), "bash completion lacks {name}");
    }
    assert!(bash.contains("--kubeconfig") && bash.contains("--dry-run"));
    // The script is valid bash.
    let script = scratch("completions").join("mongobench.bash");
    std::fs::write(&script, &bash).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let (_, zsh, _) = mongobench(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef mongobench"), "{zsh}");
    let (_, fish, _) = mongobench(&["completions", "fish"]);
    assert!(fish.contains("complete -c mongobench"), "{fish}");
    let (code, _, err) = mongobench(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

#[test]
fn a_quick_run_prints_a_valid_manifest_and_runs_against_a_real_server() {
    let dir = scratch("quick");
    let server = support::private_mongo("quick-run");
    let target = format!("t={}", server.uri);
    let quick = [
        "run",
        "--workload",
        "ycsb-c",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--workers",
        "2",
        "--sizes",
        "200",
        "--repetitions",
        "1",
        "--target",
        &target,
    ];
    let mut dry = quick.to_vec();
    dry.push("--dry-run");
    let (code, manifest, err) = mongobench(&dry);
    assert_eq!(code, 0, "{err}");
    let file = dir.join("quick.yaml");
    std::fs::write(&file, &manifest).unwrap();
    // The manifest is one `validate` accepts, with the flags' values in its fields.
    let (code, out, _) = mongobench(&["validate", "-f", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{manifest}");
    let doc: serde_json::Value = serde_yaml::from_str(&manifest).unwrap();
    assert_eq!(doc["spec"]["workload"]["ycsb"]["workload"], "c");
    assert_eq!(doc["spec"]["workload"]["workers"], 2);
    assert_eq!(doc["spec"]["dataset"]["sizes"], serde_json::json!(["200"]));
    assert_eq!(
        doc["spec"]["targets"][0]["external"]["uriSecretRef"]["name"],
        "quick-t"
    );
    // The run: one cell of YCSB workload C against the server, its result written.
    let out_dir = dir.join("out");
    let mut run = quick.to_vec();
    run.extend(["--out", out_dir.to_str().unwrap()]);
    let (code, _, err) = mongobench(&run);
    assert_eq!(code, 0, "{err}");
    // Beside the result, the run's comparison document (of one target: its baseline alone).
    let comparison = out_dir.join("comparison.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&comparison).unwrap()).unwrap();
    assert_eq!(doc["baseline"], "t");
    let results: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && *p != comparison)
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results[0]).unwrap()).unwrap();
    assert_eq!(result["cell"]["target"], "t");
    assert_eq!(result["status"], "complete", "{result}");
    // A bad value is refused naming its flag, before anything runs.
    let mut bad = quick.to_vec();
    bad[8] = "0";
    let (code, _, err) = mongobench(&bad);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "mongobench run: --workers: spec.workload.workers: must be at least 1, got 0\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
