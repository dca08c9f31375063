//! A local `mongobench run` never shows a password. With passwords holding `?`, `@`, `/`, `%`,
//! `:` or non-ASCII characters, given unescaped (the URI is refused before anything is
//! connected), escaped but wrong (a real FerretDB refuses the login), or escaped and right (the
//! run logs in to a real SecantusDB with SCRAM-SHA-256 and writes its results), no piece of one
//! is on standard
//! output, standard error or in any file `--out` holds; `--target NAME=env:VARIABLE` and
//! `NAME=file:PATH` read the URI from where it is kept instead of the command line. The same
//! holds for the runner's `connect`, which the operator's runner Job uses.
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::Duration;

use mongobench::result::ClientPath;
use mongobench::runner::server::connect;
use support::passwords::{
    HOSTILE_PASSWORDS, assert_no_password, files_under, needs_escaping, percent_encoded,
};

/// A scratch directory of this test's own, empty.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mongobench-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The smallest benchmark: 100 flights, one worker, one second, one repetition.
fn spec(dir: &Path) -> PathBuf {
    let path = dir.join("bench.yaml");
    std::fs::write(
        &path,
        "apiVersion: mongobench.io/v1alpha1\n\
         kind: MongoBenchmark\n\
         metadata: {name: secrets}\n\
         spec:\n\
         \x20 targets: [{name: a, external: {uriSecretRef: {name: s}}}]\n\
         \x20 platforms: [{name: local}]\n\
         \x20 dataset: {sizes: ['100']}\n\
         \x20 workload: {type: flights, workers: 1, duration: 1s, warmup: 0s}\n\
         \x20 repetitions: 1\n",
    )
    .unwrap();
    path
}

/// `mongobench run -f SPEC --target TARGET --out OUT` with `env` set: exit code and what it
/// printed (standard output, then standard error).
fn run(spec: &Path, target: &str, out: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .arg("run")
        .arg("-f")
        .arg(spec)
        .args(["--target", target, "--connect-timeout", "10"])
        .arg("--out")
        .arg(out)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let printed = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), printed)
}

/// `uri` (`mongodb://HOST:PORT/...`) logging in as `user` with `password` as given.
fn with_login(uri: &str, user: &str, password: &str) -> String {
    let hosts = uri
        .rsplit_once('@')
        .map_or_else(|| uri.trim_start_matches("mongodb://"), |(_, hosts)| hosts);
    format!("mongodb://{user}:{password}@{hosts}")
}

#[tokio::test]
async fn connecting_with_an_unescaped_password_is_refused_quoting_none_of_it() {
    for password in HOSTILE_PASSWORDS {
        let uri = format!("mongodb://bench:{password}@127.0.0.1:9/db?w=1");
        let outcome = connect("ext", &uri, 1, Duration::from_millis(200)).await;
        let message = outcome.expect_err("a refusal").to_string();
        assert_no_password("the refusal", &message, password);
        if needs_escaping(password) {
            assert!(
                message.starts_with("target ext: the URI does not parse: the password holds"),
                "{message}"
            );
        }
    }
}

#[tokio::test]
async fn what_the_driver_says_of_a_uri_with_an_escaped_password_quotes_none_of_it() {
    for password in HOSTILE_PASSWORDS {
        let escaped = percent_encoded(password);
        for uri in [
            format!("mongodb://bench:{escaped}@127.0.0.1:99999/"),
            format!("mongodb://bench:{escaped}@127.0.0.1:9/?maxPoolSize=lots"),
        ] {
            let outcome = connect("ext", &uri, 1, Duration::from_millis(200)).await;
            let message = outcome.expect_err("a refusal").to_string();
            assert!(message.contains("does not parse"), "{message}");
            assert_no_password("the refusal", &message, password);
        }
    }
}

#[test]
fn an_unescaped_password_is_refused_naming_the_password_and_quoting_none_of_it() {
    let server = support::secantus_uri();
    let dir = scratch("run-pw-unescaped");
    let spec = spec(&dir);
    for password in HOSTILE_PASSWORDS.into_iter().filter(|p| needs_escaping(p)) {
        let out = dir.join("out");
        let uri = with_login(&server, "bench", password);
        // On the command line and in a variable: refused alike, before anything is connected.
        for (target, env) in [
            (format!("a={uri}"), vec![]),
            (
                "a=env:MONGOBENCH_TEST_URI".to_owned(),
                vec![("MONGOBENCH_TEST_URI", uri.as_str())],
            ),
        ] {
            let (code, printed) = run(&spec, &target, &out, &env);
            assert_eq!(code, 2, "{password}: {printed}");
            assert!(
                printed.contains(": the password holds a"),
                "{password}: the refusal names the password: {printed}"
            );
            assert_no_password("the run's output", &printed, password);
            assert!(!out.exists(), "{password}: nothing is written");
        }
    }
}

#[test]
fn a_wrong_password_fails_the_login_on_the_real_server_and_quoting_none_of_it() {
    let server = support::private_mongo_sqlite_with_user("run-pw-wrong", "bench", "Right-Pw-1234");
    let dir = scratch("run-pw-wrong");
    let spec = spec(&dir);
    for password in HOSTILE_PASSWORDS {
        let out = dir.join("out");
        let uri = with_login(&server.uri, "bench", &percent_encoded(password));
        let file = dir.join("uri");
        std::fs::write(&file, format!("{uri}\n")).unwrap();
        let (code, printed) = run(&spec, &format!("a=file:{}", file.display()), &out, &[]);
        assert_eq!(code, 2, "{password}: {printed}");
        assert!(
            printed.contains("target a: the server did not answer"),
            "{password}: the login failed: {printed}"
        );
        assert_no_password("the run's output", &printed, password);
        assert_no_password("--out", &files_under(&out), password);
        // A non-ASCII password as written is a valid URI: refused by the server the same way.
        if !needs_escaping(password) {
            let raw = with_login(&server.uri, "bench", password);
            let env = [("MONGOBENCH_TEST_URI", raw.as_str())];
            let (code, printed) = run(&spec, "a=env:MONGOBENCH_TEST_URI", &out, &env);
            assert_eq!(code, 2, "{password}: {printed}");
            assert_no_password("the run's output", &printed, password);
        }
    }
}

#[test]
fn a_password_that_logs_in_reaches_no_output_and_no_result_file() {
    let password = HOSTILE_PASSWORDS[6];
    let server = support::private_secantus_with_user("run-pw-right", "bench", password);
    let dir = scratch("run-pw-right");
    let spec = spec(&dir);
    let out = dir.join("out");
    let env = [("MONGOBENCH_TEST_URI", server.uri.as_str())];
    let (code, printed) = run(&spec, "a=env:MONGOBENCH_TEST_URI", &out, &env);
    assert_eq!(code, 0, "{printed}");
    let results = support::runs::read_results(&out);
    assert_eq!(results.len(), 1, "{printed}");
    assert!(results[0].is_complete(), "{:?}", results[0].status);
    // The workers logged in on connections of their own, with the password.
    assert_eq!(results[0].client_path, Some(ClientPath::OwnConnections));
    let written = files_under(&out);
    assert!(written.contains("results.csv") && written.contains("report.txt"));
    assert_no_password("the run's output", &printed, password);
    assert_no_password("--out", &written, password);
}
