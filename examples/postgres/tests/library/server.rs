//! A PostgreSQL server of the tests' own: `initdb` into a scratch directory, on a private
//! port of 127.0.0.1, with password authentication (scram-sha-256) for the test role, and TLS
//! with a certificate for `localhost` (`certificates.rs`), as the connector connects by default
//! (`sslmode` `require`, channel binding). Run as root (as the suite runs), the server runs as
//! the system user `sparkds-pg`, made once.
//!
//! A watchdog stops the server and removes its directory when the test process ends, however
//! it ends: a shell in a session of its own that waits on a pipe from this process, whose end
//! closes when the process exits, panics or is killed.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::certificates;

/// The role that the tests connect as.
pub const USER: &str = "sparkds";
/// Its password: the tests check that no message holds it.
pub const PASSWORD: &str = "pw-7d1f0c3a-secret";
/// The database of the tests.
pub const DATABASE: &str = "sparkds";
/// The system user that runs the server when the tests run as root.
const SYSTEM_USER: &str = "sparkds-pg";
const SUPERUSER_PASSWORD: &str = "superuser-pw";

/// What a server starts with besides the defaults: settings (`-c name=value`, where `{dir}`
/// is its directory), lines put first in `pg_hba.conf`, and files of its own (such as its certificate) written into its
/// directory, with their mode, before it starts.
#[derive(Default)]
pub struct Setup {
    pub settings: Vec<String>,
    pub hba: Vec<String>,
    pub files: Vec<(&'static str, Vec<u8>, u32)>,
    /// Arguments of `initdb` (such as `--wal-segsize=1`).
    pub initdb: Vec<String>,
    /// No TLS: the server refuses an `SSLRequest`, and its options say `sslmode=disable`.
    pub plain: bool,
}

/// A running server.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    plain: bool,
    settings: Vec<String>,
    initdb: Vec<String>,
    bin: PathBuf,
    run_as: Option<&'static str>,
    watchdog: Mutex<Option<Child>>,
}

/// The server that most tests share, started once per test process.
pub fn shared() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(Server::start)
}

/// The server that the tests of change data capture share: `wal_level = logical`, and the
/// test role may use replication slots.
pub fn logical() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::start_logical(Setup::default()))
}

impl Server {
    /// Starts a new server.
    ///
    /// # Panics
    /// When PostgreSQL is not installed (`apt-get install postgresql`) or does not start.
    pub fn start() -> Server {
        Server::start_with(Setup::default())
    }

    /// Starts a new server for change data capture: `setup` with `wal_level = logical`, and the
    /// test role with the `REPLICATION` attribute.
    pub fn start_logical(mut setup: Setup) -> Server {
        // Commits flushed at once: a peek returns what the server has flushed, and the tests
        // read right after they commit.
        setup.settings.push("wal_level=logical".into());
        setup.settings.push("synchronous_commit=on".into());
        // Each test's slots, and the temporary copies of those decoded in parts.
        if !setup
            .settings
            .iter()
            .any(|s| s.starts_with("max_replication_slots"))
        {
            setup.settings.push("max_replication_slots=40".into());
        }
        let server = Server::start_with(setup);
        server.admin(&format!("ALTER ROLE {USER} REPLICATION"));
        server
    }

    /// Starts a new server with `setup`.
    ///
    /// # Panics
    /// As [`Server::start`], or when a file cannot be written.
    pub fn start_with(mut setup: Setup) -> Server {
        if !setup.plain {
            setup.settings.extend([
                "ssl=on".to_string(),
                "ssl_cert_file={dir}/server.crt".to_string(),
                "ssl_key_file={dir}/server.key".to_string(),
            ]);
            setup.files.extend([
                ("server.crt", certificates::file("server.crt"), 0o644),
                ("server.key", certificates::file("server.key"), 0o600),
            ]);
        }
        let bin = bin_dir();
        let run_as = is_root().then(ensure_system_user);
        let dir = tempfile::Builder::new()
            .prefix("sparkds-pg-")
            .tempdir()
            .expect("a scratch directory")
            .keep();
        let server = Server {
            port: free_port(),
            watchdog: Mutex::new(Some(watchdog(&dir, &bin, run_as))),
            settings: setup
                .settings
                .iter()
                .map(|setting| format!(" -c {}", setting.replace("{dir}", &dir.to_string_lossy())))
                .collect(),
            initdb: setup.initdb.clone(),
            plain: setup.plain,
            dir,
            bin,
            run_as,
        };
        for (name, bytes, mode) in &setup.files {
            use std::os::unix::fs::PermissionsExt;
            let path = server.dir.join(name);
            std::fs::write(&path, bytes).expect("a file of the server");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))
                .expect("the file's mode");
        }
        server.init();
        if !setup.hba.is_empty() {
            // Written in place: the file keeps its owner, the server's user.
            let hba = server.data().join("pg_hba.conf");
            let rest = std::fs::read_to_string(&hba).expect("pg_hba.conf");
            std::fs::write(&hba, format!("{}\n{rest}", setup.hba.join("\n")))
                .expect("pg_hba.conf is written");
        }
        server.pg_ctl(&["start"]);
        server.create_role();
        server
    }

    /// `postgresql://127.0.0.1:<port>/sparkds`.
    pub fn url(&self) -> String {
        format!("postgresql://127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// The options of a read or a write of `dbtable` as the test role: TLS by default, and a
    /// server without it named as such (`sslmode=disable`), which a connection needs to go
    /// without TLS.
    pub fn options(&self, dbtable: &str) -> Vec<(String, String)> {
        let mut options = vec![
            ("url".into(), self.url()),
            ("user".into(), USER.into()),
            ("password".into(), PASSWORD.into()),
            ("dbtable".into(), dbtable.into()),
        ];
        if self.plain {
            options.push(("sslmode".into(), "disable".into()));
        }
        options
    }

    /// A client connected as the test role.
    pub fn client(&self) -> postgres::Client {
        self.connect(USER, PASSWORD, DATABASE)
    }

    /// A client connected as the test role to `database`.
    pub fn client_of(&self, database: &str) -> postgres::Client {
        self.connect(USER, PASSWORD, database)
    }

    /// Restarts the server (a fast shutdown: open sessions are ended), and waits until it
    /// takes connections again.
    pub fn restart(&self) {
        self.pg_ctl(&["restart", "-m", "fast"]);
    }

    /// Stops the server (a fast shutdown), and starts it again after `pause`.
    pub fn stop_for(&self, pause: std::time::Duration) {
        self.pg_ctl(&["stop", "-m", "fast"]);
        std::thread::sleep(pause);
        self.pg_ctl(&["start"]);
    }

    /// Whether the server answers.
    pub fn is_up(&self) -> bool {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(USER)
            .password(PASSWORD)
            .dbname(DATABASE)
            .connect(postgres::NoTls)
            .is_ok()
    }

    /// Runs `statements` as the superuser, in the tests' database.
    pub fn admin(&self, statements: &str) {
        self.connect("postgres", SUPERUSER_PASSWORD, DATABASE)
            .batch_execute(statements)
            .unwrap_or_else(|e| panic!("{statements}: {e}"));
    }

    fn connect(&self, user: &str, password: &str, database: &str) -> postgres::Client {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(user)
            .password(password)
            .dbname(database)
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to the test server as {user}: {e}"))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn init(&self) {
        let password_file = self.dir.join("superuser-password");
        std::fs::write(&password_file, SUPERUSER_PASSWORD).expect("a password file");
        if let Some(user) = self.run_as {
            run(Command::new("chown").args(["-R", user]).arg(&self.dir));
        }
        let mut initdb = self.command("initdb");
        initdb
            .arg("-D")
            .arg(self.data())
            .args(["-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
            .args(["--auth=scram-sha-256"])
            .args(&self.initdb)
            .arg(format!("--pwfile={}", password_file.display()));
        run(&mut initdb);
    }

    fn pg_ctl(&self, action: &[&str]) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off{}",
            self.port,
            self.dir.display(),
            self.settings.concat()
        );
        let mut pg_ctl = self.command("pg_ctl");
        pg_ctl
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "60", "-o", &options])
            .args(action);
        run(&mut pg_ctl);
    }

    fn create_role(&self) {
        let mut admin = self.connect("postgres", SUPERUSER_PASSWORD, "postgres");
        // Two statements: CREATE DATABASE cannot run in the transaction of a multi-statement
        // string.
        for statement in [
            format!("CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'"),
            format!("CREATE DATABASE {DATABASE} OWNER {USER}"),
        ] {
            admin
                .batch_execute(&statement)
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    }

    /// A command of PostgreSQL's, run as the server's user.
    fn command(&self, program: &str) -> Command {
        command(&self.bin, program, self.run_as)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let watchdog = self.watchdog.get_mut().ok().and_then(Option::take);
        if let Some(mut watchdog) = watchdog {
            // Closing its stdin tells the watchdog to stop the server and remove the directory.
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
        }
    }
}

fn command(bin: &Path, program: &str, run_as: Option<&str>) -> Command {
    match run_as {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(bin.join(program));
            command
        }
        None => Command::new(bin.join(program)),
    }
}

/// The watchdog of the server in `dir`.
fn watchdog(dir: &Path, bin: &Path, run_as: Option<&str>) -> Child {
    let pg_ctl = bin.join("pg_ctl");
    let stop = match run_as {
        Some(user) => format!("runuser -u {user} -- {} ", pg_ctl.display()),
        None => format!("{} ", pg_ctl.display()),
    };
    let script = format!(
        "read _ignored; {stop} -D '{dir}/data' -m immediate stop > /dev/null 2>&1; rm -rf '{dir}'",
        dir = dir.display()
    );
    let mut child = Command::new("setsid")
        .args(["sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("setsid and sh run the server's watchdog");
    // Nothing is ever written: only the pipe's end matters.
    if let Some(stdin) = child.stdin.as_mut() {
        let _ = stdin.flush();
    }
    child
}

/// PostgreSQL's programs: `$PG_BIN`, else the newest `/usr/lib/postgresql/<version>/bin`.
fn bin_dir() -> PathBuf {
    if let Some(bin) = std::env::var_os("PG_BIN") {
        return PathBuf::from(bin);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("PostgreSQL is installed (`apt-get install postgresql`, or set PG_BIN)")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// The system user that runs servers, made when it is missing.
fn ensure_system_user() -> &'static str {
    static MADE: Mutex<()> = Mutex::new(());
    let _guard = MADE.lock();
    let exists = || {
        Command::new("id")
            .arg(SYSTEM_USER)
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !exists() {
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(SYSTEM_USER)
            .status();
        assert!(exists(), "cannot create the system user {SYSTEM_USER}");
    }
    SYSTEM_USER
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port on 127.0.0.1")
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
