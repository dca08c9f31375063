//! Servers of one test's own: a FerretDB (on PostgreSQL or SQLite) or a SecantusDB process
//! that the test may stop, kill and restart, started from the binaries `testenv/up` built.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{ensure_up, free_port, run_dir, slug, testenv_bin, unique_suffix};

/// A FerretDB process of one test's own, for tests that need a server nobody else uses: the
/// fixed `airline.flights` namespace, or stopping and killing the server mid-run. The process
/// is killed when this is dropped, and its storage removed.
pub struct PrivateMongo {
    pub uri: String,
    child: std::process::Child,
    /// The command that started it, to start it again on the same port and storage.
    command: (PathBuf, Vec<String>),
    port: u16,
    dir: PathBuf,
    /// The PostgreSQL database of a PostgreSQL-backed server (dropped with it).
    database: Option<PrivateDatabase>,
}

/// A database of the testenv's PostgreSQL cluster that one private server stores its data in.
struct PrivateDatabase {
    psql: PathBuf,
    /// The shared server's database URL, to connect to while creating or dropping this one.
    admin_url: String,
    name: String,
}

impl PrivateDatabase {
    fn sql(&self, statement: &str) -> Result<(), String> {
        let out = Command::new(&self.psql)
            .args(["-Xq", "-v", "ON_ERROR_STOP=1", "-d", &self.admin_url])
            .args(["-c", statement])
            .output()
            .map_err(|e| format!("running {}: {e}", self.psql.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{statement}` on {}: {}",
                self.admin_url,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl PrivateMongo {
    /// The server's process id (for SIGSTOP/SIGCONT/SIGKILL).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server now (as a crash would). Its storage stays until this is dropped.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the killed server again on the same port and storage, and waits until it
    /// accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        self.child = spawn_ferretdb(&self.command.0, &self.command.1, &self.dir);
        self.wait_listening();
    }

    /// Pauses the server (SIGSTOP): connections stay open and nothing answers.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Resumes a paused server (SIGCONT).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the pid of a child this value owns and has not reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(rc, 0, "signal {signal} to the private FerretDB");
    }

    fn wait_listening(&mut self) {
        if let Err(e) = wait_listening(&mut self.child, self.port, &self.dir) {
            panic!("{e}");
        }
    }

    pub async fn client(&self) -> mongodb::Client {
        mongodb::Client::with_uri_str(&self.uri)
            .await
            .expect("a client for the private FerretDB")
    }
}

impl Drop for PrivateMongo {
    fn drop(&mut self) {
        self.kill();
        if let Some(db) = &self.database {
            // FORCE: connections of the killed server may not be gone yet.
            let _ = db.sql(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                db.name
            ));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts a private FerretDB on the testenv's PostgreSQL cluster, with a PostgreSQL database of
/// its own, on a free loopback port, and waits until it accepts connections. Killing it is a
/// server crash; its data stays in PostgreSQL until this is dropped.
pub fn private_mongo(test: &str) -> PrivateMongo {
    let env = ensure_up("mongo");
    let admin_url = env
        .postgresql_url
        .expect("testenv/up mongo reported no MONGOBENCH_POSTGRESQL_URL");
    let psql = env
        .psql
        .expect("testenv/up mongo reported no MONGOBENCH_PSQL");
    let name = format!(
        "private_{}_{}",
        slug(test, 30).replace('-', "_"),
        unique_suffix()
    );
    let (cluster, _) = admin_url
        .rsplit_once('/')
        .expect("MONGOBENCH_POSTGRESQL_URL ends in /DATABASE");
    let url = format!("{cluster}/{name}");
    let database = PrivateDatabase {
        psql,
        admin_url,
        name,
    };
    // A copy of template1, which holds the GIN-twin triggers (testenv/postgres/init.sql).
    database
        .sql(&format!("CREATE DATABASE \"{}\"", database.name))
        .unwrap_or_else(|e| panic!("creating the private server's PostgreSQL database: {e}"));
    start_private("mongo", test, Some((url, database)))
}

/// Starts a private FerretDB on SQLite (files of its own) on a free loopback port and waits
/// until it accepts connections.
pub fn private_mongo_sqlite(test: &str) -> PrivateMongo {
    start_private("mongo-sqlite", test, None)
}

/// [`private_mongo_sqlite`] with SCRAM authentication on and `user` (password `password`)
/// created in the admin database; its `uri` logs in as that user (both percent-encoded).
pub fn private_mongo_sqlite_with_user(test: &str, user: &str, password: &str) -> PrivateMongo {
    let mut server = start_private_with(
        "mongo-sqlite",
        test,
        None,
        &[
            format!("--setup-user={user}"),
            format!("--setup-password={password}"),
        ],
    );
    let (user, password) = (
        super::passwords::percent_encoded(user),
        super::passwords::percent_encoded(password),
    );
    server.uri = format!("mongodb://{user}:{password}@127.0.0.1:{}/", server.port);
    server
}

/// Starts a private SecantusDB (WiredTiger files of its own) on a free loopback port and waits
/// until it accepts connections.
pub fn private_secantus(test: &str) -> PrivateMongo {
    start_private("secantus", test, None)
}

/// [`private_secantus`] with `extra` arguments for the server, a flag given twice taking the
/// later value: `--cache-size=64M`, `--block-compressor=zlib`, its TLS files.
pub fn private_secantus_with(test: &str, extra: &[String]) -> PrivateMongo {
    start_private_with("secantus", test, None, extra)
}

/// [`private_secantus`] with access control on (`--auth`) and `user` (password `password`)
/// created in the admin database, as the images' entrypoints create their root user (through
/// the localhost exception); its `uri` logs in as that user (both percent-encoded).
pub fn private_secantus_with_user(test: &str, user: &str, password: &str) -> PrivateMongo {
    let mut server = start_private_with("secantus", test, None, &["--auth".to_owned()]);
    let command = mongodb::bson::doc! {"createUser": user, "pwd": password,
    "roles": [{"role": "root", "db": "admin"}]};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(async {
            let client = server.client().await;
            let created = client.database("admin").run_command(command).await;
            client.shutdown().await;
            created
        })
        .unwrap_or_else(|e| panic!("creating {user} on the private SecantusDB: {e}"));
    let (user, password) = (
        super::passwords::percent_encoded(user),
        super::passwords::percent_encoded(password),
    );
    server.uri = format!("mongodb://{user}:{password}@127.0.0.1:{}/", server.port);
    server
}

/// Starts `ferretdb` on PostgreSQL (`postgresql`: the database URL and the database) or, when
/// that is `None`, on SQLite files in the server's private directory; for `secantus`,
/// `secantusd-rs` on WiredTiger files there.
fn start_private(
    component: &'static str,
    test: &str,
    postgresql: Option<(String, PrivateDatabase)>,
) -> PrivateMongo {
    start_private_with(component, test, postgresql, &[])
}

/// [`start_private`] with `extra` arguments for the server.
fn start_private_with(
    component: &'static str,
    test: &str,
    postgresql: Option<(String, PrivateDatabase)>,
    extra: &[String],
) -> PrivateMongo {
    let executable = if component == "secantus" {
        "secantusd-rs"
    } else {
        "ferretdb"
    };
    let bin = testenv_bin(component, executable);
    let dir = run_dir()
        .join("private")
        .join(format!("{}-{}", slug(test, 40), unique_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let (url, database) = postgresql.unzip();
    // A port free a moment ago can be taken by another program before the server binds it;
    // the server then exits at start saying so, and gets another port.
    const ATTEMPTS: u32 = 3;
    for attempt in 1..=ATTEMPTS {
        let port = free_port();
        let mut args = server_args(component, url.as_deref(), port, &dir);
        args.extend_from_slice(extra);
        let mut child = spawn_ferretdb(&bin, &args, &dir);
        match wait_listening(&mut child, port, &dir) {
            Ok(()) => {
                return PrivateMongo {
                    uri: format!("mongodb://127.0.0.1:{port}/"),
                    child,
                    command: (bin, args),
                    port,
                    dir,
                    database,
                };
            }
            Err(e) if attempt < ATTEMPTS && e.to_lowercase().contains("address already in use") => {
                eprintln!("private {component}: port {port} was taken, trying another: {e}");
            }
            Err(e) => panic!("{e}"),
        }
    }
    unreachable!("the last attempt returns or panics")
}

/// The command line of a private `component` listening on `port`, with its files in `dir`:
/// FerretDB on the PostgreSQL database `postgresql` or else on SQLite, or SecantusDB.
fn server_args(component: &str, postgresql: Option<&str>, port: u16, dir: &Path) -> Vec<String> {
    match postgresql {
        _ if component == "secantus" => vec![
            "--host=127.0.0.1".to_owned(),
            format!("--port={port}"),
            format!("--storage-path={}", dir.join("data").display()),
            "--cache-size=1G".to_owned(),
            "--log-level=WARNING".to_owned(),
        ],
        Some(url) => vec![
            format!("--postgresql-url={url}"),
            format!("--listen-addr=127.0.0.1:{port}"),
            "--log-level=warn".to_owned(),
        ],
        None => vec![
            format!("--sqlite-url=file:{}/", dir.display()),
            format!("--listen-addr=127.0.0.1:{port}"),
            "--log-level=warn".to_owned(),
        ],
    }
}

/// Waits until `child` accepts connections on `port`; its log (in `dir`) when it exits first
/// or is not listening after 30 s. A child that has exited is reaped.
fn wait_listening(child: &mut std::process::Child, port: u16, dir: &Path) -> Result<(), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let listening = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        // Checked after connecting too: what answered may be another program on a taken port.
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(dir.join("ferretdb.log")).unwrap_or_default();
            return Err(format!(
                "private server on port {port} exited at start ({status}):\n{log}"
            ));
        }
        if listening {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "private server on port {port} did not start within 30 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `bin args`, logging to `dir/ferretdb.log` (appended across restarts).
fn spawn_ferretdb(bin: &Path, args: &[String], dir: &Path) -> std::process::Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("ferretdb.log"))
        .unwrap();
    let mut command = Command::new(bin);
    // SAFETY: prctl is async-signal-safe; the server dies with the test process even when the
    // test binary is killed before its destructors run.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    command
        .args(args)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "starting {}: {e} (build it with `testenv/build ferretdb secantus`)",
                bin.display()
            )
        })
}
