//! Where the server is and who connects: the options `url`, `user` and `password`, with the
//! fallbacks that libpq and PostgreSQL's JDBC driver have (`PGUSER`, `sslmode`, `sslrootcert`;
//! `PGPASSWORD` and `~/.pgpass` only with `passwordFromEnvironment`), turned into a connection,
//! with TLS as `sslmode` says (`tls`) and the server's authentication held to what `guard`
//! allows. No message built here holds the password or the URL (both secret by Spark's
//! redaction rule): errors name the option instead.

use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::SinkExt;
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Options, Result, Secret};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::config::{ChannelBinding as ClientChannelBinding, SslMode as ClientSslMode};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::copy_out::{Detach, Layer};
use super::guard::{Binding, Guarded, GuardedTls, Policy, Socket, DEFAULT_MIN_ITERATIONS};
use super::tls::{connector, ClientCert, RootCert, SslMode};

/// A connection of the client, over a socket of `guard`.
pub type ClientConnection = tokio_postgres::Connection<
    Socket,
    Guarded<<MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream>,
>;

/// A connection of the client whose stream a read can take (`copy_out`).
pub type DetachableConnection = tokio_postgres::Connection<
    Layer<Socket>,
    Guarded<Layer<<MakeRustlsConnect as MakeTlsConnect<Layer<Socket>>>::Stream>>,
>;

/// The default port of PostgreSQL.
const DEFAULT_PORT: u16 = 5432;

/// Session settings of every connection: text renderings that read back exactly (the values
/// of pushed filters travel as text, see `sql.rs`), and UTC for `timestamptz` text.
const SESSION_OPTIONS: &str =
    "-c extra_float_digits=3 -c DateStyle=ISO,YMD -c TimeZone=UTC -c bytea_output=hex";

/// How to reach the server: what each read task and write task connects with. It crosses to
/// the executors with the reader or the writer, password included, as Spark's JDBC source
/// sends its options.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Connection {
    host: String,
    port: u16,
    dbname: Option<String>,
    user: Option<String>,
    password: Option<Secret>,
    /// Seconds; 0 waits as long as the operating system does.
    connect_timeout: u64,
    sslmode: SslMode,
    /// `sslrootcert`: the certificate authority that the server's certificate must be signed
    /// by, on every machine that connects, or `system`.
    root_cert: Option<RootCert>,
    /// `sslcert` and `sslkey`: the client's certificate and key, on every machine that
    /// connects.
    client_cert: Option<ClientCert>,
    /// `allowPasswordWithoutTls`: answer a request for the password in clear or as MD5 on a
    /// connection without TLS.
    password_without_tls: bool,
    /// `channelBinding`: what a connection with TLS accepts of the server's authentication.
    channel_binding: Binding,
    /// `minScramIterations`: the fewest iterations of SCRAM that the server may ask for.
    min_scram_iterations: u64,
    /// `passwordFromEnvironment`: without a password in the options, take `PGPASSWORD` or the
    /// password file of the machine that connects.
    password_from_environment: bool,
}

/// How one attempt to connect goes: with TLS or without.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    Tls,
    Plain,
}

impl Connection {
    /// The connection that the options describe.
    ///
    /// # Errors
    /// No `url`, a `url` that is not a PostgreSQL URL, an unknown `sslmode` or
    /// `channelBinding`, a root certificate file that cannot be read.
    pub fn from_options(options: &Options) -> Result<Connection> {
        let url = options.secret("url").ok_or_else(|| {
            Error::Option(
                "missing option `url`: set it with .option(\"url\", \
                 \"postgresql://host:5432/database\") (the JDBC form \
                 jdbc:postgresql://host:5432/database works too)"
                    .to_string(),
            )
        })?;
        let mut connection = parse_url(url.expose())?;
        if let Some(user) = options.get("user") {
            connection.user = Some(user.to_string());
        }
        if let Some(password) = options.secret("password") {
            connection.password = Some(password);
        }
        // As libpq: the option, the URL's, then the environment's.
        let setting = |key: &str, variable: &str| {
            options
                .get(key)
                .map(str::to_string)
                .or_else(|| connection_param(url.expose(), key))
                .or_else(|| std::env::var(variable).ok())
        };
        connection.root_cert = setting("sslrootcert", "PGSSLROOTCERT").map(|r| RootCert::parse(&r));
        connection.client_cert = match (
            setting("sslcert", "PGSSLCERT"),
            setting("sslkey", "PGSSLKEY"),
        ) {
            (Some(cert), Some(key)) => Some(ClientCert {
                cert: PathBuf::from(cert),
                key: PathBuf::from(key),
            }),
            (None, None) => None,
            _ => {
                return Err(Error::Option(
                    "options `sslcert` and `sslkey` go together: give both, the client's \
                     certificate and its key, or neither"
                        .to_string(),
                ))
            }
        };
        // TLS unless a setting names a mode without it: a server in the middle would answer
        // "no TLS" for the real one. With a certificate authority to check the server's
        // certificate against, it is checked, with the host's name.
        connection.sslmode = match setting("sslmode", "PGSSLMODE") {
            Some(mode) => SslMode::parse(&mode)?,
            None if connection.root_cert.is_some() => SslMode::VerifyFull,
            None => SslMode::Require,
        };
        let binding = setting("channelBinding", "PGCHANNELBINDING")
            .or_else(|| connection_param(url.expose(), "channel_binding"));
        connection.channel_binding = match binding {
            Some(binding) => Binding::parse(&binding)?,
            // A client certificate checked by a server whose own certificate is checked with
            // its name: both ends are known before any password, and a server that signs in
            // by certificate (`cert` in pg_hba.conf) has no SCRAM to bind.
            None if connection.client_cert.is_some()
                && connection.sslmode == SslMode::VerifyFull =>
            {
                Binding::Prefer
            }
            None => Binding::Require,
        };
        connection.password_without_tls = options.get_or("allowPasswordWithoutTls", false)?;
        connection.min_scram_iterations =
            options.get_or("minScramIterations", DEFAULT_MIN_ITERATIONS)?;
        connection.password_from_environment = options.get_or("passwordFromEnvironment", false)?;
        connection.connect_timeout =
            options.get_or("connectTimeout", connection.connect_timeout)?;
        // A bad root certificate file is an option error now, not a failed task later.
        if connection.sslmode != SslMode::Disable {
            connector(
                connection.sslmode,
                connection.root_cert.as_ref(),
                connection.client_cert.as_ref(),
            )?;
        }
        Ok(connection)
    }

    /// Opens a connection, named `application_name` in `pg_stat_activity`.
    ///
    /// # Errors
    /// The server's message (a wrong password, an unknown database), or why it could not be
    /// reached; never the password.
    pub fn connect(&self, application_name: &str) -> Result<Session> {
        self.try_session(application_name)
            .map_err(|failed| failed.error)
    }

    /// [`Connection::connect`], saying whether a failure may pass (see [`is_transient`]).
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub fn try_session(
        &self,
        application_name: &str,
    ) -> std::result::Result<Session, ConnectError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ConnectError {
                error: Error::io("cannot start the runtime of a connection", e),
                transient: false,
            })?;
        let (client, connection) = runtime.block_on(self.try_connect(application_name))?;
        // Polled whenever the session waits on the runtime, as the synchronous client does.
        runtime.spawn(connection);
        Ok(Session { runtime, client })
    }

    /// [`Connection::connect`] on the caller's runtime, for a read that drives the
    /// connection itself (see `read.rs`).
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn connect_async(
        &self,
        application_name: &str,
    ) -> Result<(Client, ClientConnection)> {
        self.try_connect(application_name)
            .await
            .map_err(|failed| failed.error)
    }

    /// [`Connection::try_connect`] on streams that `detach` can take from under the client,
    /// for a read that reads its COPY off the stream itself (see `copy_out`).
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn try_connect_detachable(
        &self,
        application_name: &str,
        detach: &Detach,
    ) -> std::result::Result<(Client, DetachableConnection), ConnectError> {
        self.connect_with(
            application_name,
            |socket| detach.layer(socket),
            |tls| detach.tls(tls),
        )
        .await
    }

    /// [`Connection::connect_async`], saying whether a failure may pass: a server that
    /// refuses connections, is starting up or shutting down (see [`is_transient`]).
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn try_connect(
        &self,
        application_name: &str,
    ) -> std::result::Result<(Client, ClientConnection), ConnectError> {
        self.connect_with(application_name, |socket| socket, |tls| tls)
            .await
    }

    /// Connects with the socket and the TLS connector that `socket` and `tls` wrap (in
    /// `cdc::replication`, to ask for a replication connection).
    ///
    /// # Errors
    /// As [`Connection::try_connect`].
    pub async fn connect_with<S, T>(
        &self,
        application_name: &str,
        socket: impl Fn(Socket) -> S,
        tls: impl Fn(<MakeRustlsConnect as MakeTlsConnect<S>>::TlsConnect) -> T,
    ) -> std::result::Result<
        (Client, tokio_postgres::Connection<S, Guarded<T::Stream>>),
        ConnectError,
    >
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        T: TlsConnect<S>,
        T::Future: Unpin,
    {
        let fatal = |error| ConnectError {
            error,
            transient: false,
        };
        let (mut config, user, dbname) = self.config(application_name).map_err(fatal)?;
        let mode = match self.sslmode {
            SslMode::Disable | SslMode::Allow | SslMode::Prefer => SslMode::Prefer,
            mode => mode,
        };
        let mut make =
            connector(mode, self.root_cert.as_ref(), self.client_cert.as_ref()).map_err(fatal)?;
        let has_password = config.get_password().is_some();
        let mut failure = None;
        let mut refused_tls = false;
        for &transport in self.transports() {
            // libpq's `prefer`: plain only when the server said it has no TLS, not when TLS
            // failed for another reason (a certificate, a password).
            if transport == Transport::Plain && self.sslmode == SslMode::Prefer && !refused_tls {
                break;
            }
            let refused = Arc::new(AtomicBool::new(false));
            let attempt = async {
                let raw = self
                    .socket(refused.clone(), has_password)
                    .await
                    .map_err(|e| (e.to_string(), is_transient_io(&e)))?;
                let Ok(connect) = MakeTlsConnect::<S>::make_tls_connect(&mut make, &self.host);
                let guarded = GuardedTls {
                    inner: tls(connect),
                    policy: self.policy(Transport::Tls, has_password),
                };
                self.configure(&mut config, transport)
                    .connect_raw(socket(raw), guarded)
                    .await
                    .map_err(|e| (describe(&e), is_transient(&e)))
            };
            match self.within_timeout(attempt).await {
                Ok(connected) => return Ok(connected),
                Err((why, transient)) => {
                    refused_tls = refused.load(Ordering::Relaxed);
                    let why = if refused_tls && !self.sslmode.allows_plain() {
                        self.no_tls()
                    } else {
                        why
                    };
                    failure = Some(ConnectError {
                        error: self.unreachable(&user, &dbname, &why),
                        transient,
                    })
                }
            }
        }
        Err(failure.unwrap_or_else(|| fatal(Error::msg("no way to connect"))))
    }

    /// Why a connection whose `sslmode` needs TLS failed on a server that has none.
    fn no_tls(&self) -> String {
        format!(
            "the server has no TLS, and sslmode {} connects only with TLS (the default is \
             require, or verify-full with `sslrootcert`): turn TLS on in the server (ssl = on), \
             or set the option `sslmode` to disable where no one else can listen on the \
             network or answer in the server's place",
            self.sslmode.name()
        )
    }

    /// What the attempts to connect are, in order, by `sslmode`. A Unix socket has no TLS:
    /// PostgreSQL offers none there, and libpq ignores `sslmode` for it.
    fn transports(&self) -> &'static [Transport] {
        if self.host.starts_with('/') {
            return &[Transport::Plain];
        }
        match self.sslmode {
            SslMode::Disable => &[Transport::Plain],
            // libpq's `allow`: plain first, TLS when the server refuses plain.
            SslMode::Allow => &[Transport::Plain, Transport::Tls],
            SslMode::Prefer => &[Transport::Tls, Transport::Plain],
            _ => &[Transport::Tls],
        }
    }

    /// `config` for an attempt over `transport`: the client asks for TLS or not, and, with
    /// TLS, holds SCRAM to `channelBinding` too (the guard's check is on what the server
    /// offers; the client's, on what it answers).
    fn configure<'c>(
        &self,
        config: &'c mut tokio_postgres::Config,
        transport: Transport,
    ) -> &'c mut tokio_postgres::Config {
        match transport {
            Transport::Tls => config
                .ssl_mode(ClientSslMode::Require)
                .channel_binding(self.channel_binding.client()),
            Transport::Plain => config
                .ssl_mode(ClientSslMode::Disable)
                .channel_binding(ClientChannelBinding::Disable),
        }
    }

    /// What the guard lets the server ask for over `transport`.
    fn policy(&self, transport: Transport, has_password: bool) -> Policy {
        Policy {
            // Over TLS, a password in clear is as libpq sends it (channel binding, by default,
            // refuses it first).
            clear_password: transport == Transport::Tls || self.password_without_tls,
            channel_binding: transport == Transport::Tls
                && self.channel_binding == Binding::Require,
            min_iterations: self.min_scram_iterations,
            has_password,
        }
    }

    /// `attempt`, failed after `connectTimeout` seconds without an answer.
    async fn within_timeout<T>(
        &self,
        attempt: impl Future<Output = std::result::Result<T, (String, bool)>>,
    ) -> std::result::Result<T, (String, bool)> {
        match self.connect_timeout {
            0 => attempt.await,
            seconds => tokio::time::timeout(Duration::from_secs(seconds), attempt)
                .await
                .unwrap_or_else(|_| {
                    Err((
                        format!("no answer within {seconds} seconds (option `connectTimeout`)"),
                        true,
                    ))
                }),
        }
    }

    /// The socket to the server: TCP, or a Unix socket in the directory `host`, as libpq
    /// reads a host that starts with `/`; `refused_tls` is set when the server answers that it
    /// has no TLS.
    async fn socket(
        &self,
        refused_tls: Arc<AtomicBool>,
        has_password: bool,
    ) -> std::io::Result<Socket> {
        let plain = self.policy(Transport::Plain, has_password);
        if self.host.starts_with('/') {
            let path = format!("{}/.s.PGSQL.{}", self.host, self.port);
            let stream = UnixStream::connect(path).await?;
            return Ok(Socket::unix(stream, plain));
        }
        let stream = TcpStream::connect((self.host.as_str(), self.port)).await?;
        stream.set_nodelay(true)?;
        // As the client's own sockets: a server that vanished without a word ends a read
        // after the system's keepalive probes, not never.
        socket2::SockRef::from(&stream).set_keepalive(true)?;
        Ok(Socket::tcp(stream, plain, refused_tls))
    }

    /// The client's configuration, with the user and the database it names.
    fn config(&self, application_name: &str) -> Result<(tokio_postgres::Config, String, String)> {
        let user = self
            .user
            .clone()
            .or_else(|| std::env::var("PGUSER").ok())
            .or_else(|| std::env::var("USER").ok())
            .ok_or_else(|| {
                Error::Option(
                    "missing option `user`: set it with .option(\"user\", ...), in the url \
                     (postgresql://user@host/db), or in PGUSER"
                        .to_string(),
                )
            })?;
        let dbname = self.dbname.clone().unwrap_or_else(|| user.clone());
        let mut config = tokio_postgres::Config::new();
        config
            .host(&self.host)
            .port(self.port)
            .user(&user)
            .dbname(&dbname)
            .application_name(application_name)
            .options(SESSION_OPTIONS);
        if let Some(password) = self.password() {
            config.password(password.expose());
        }
        Ok((config, user, dbname))
    }

    fn unreachable(&self, user: &str, dbname: &str, why: &str) -> Error {
        Error::msg(format!(
            "cannot connect to PostgreSQL at {}:{} (database `{dbname}`, user `{user}`): {why}",
            self.host, self.port,
        ))
    }

    /// The password: the option or the URL's; else, with `passwordFromEnvironment`,
    /// `PGPASSWORD`, else the first matching line of the password file (`PGPASSFILE`, or
    /// `~/.pgpass`), as libpq looks for it.
    fn password(&self) -> Option<Secret> {
        self.password_in(&|name| std::env::var_os(name))
    }

    /// [`Connection::password`] in the environment `env`. Without `passwordFromEnvironment`,
    /// nothing of the machine's environment is a password: a query that names a host of its
    /// own (a Spark Connect session, a job on a shared cluster) would have the password of the
    /// machine that connects sent there, the driver's or an executor's.
    fn password_in(&self, env: &dyn Fn(&str) -> Option<OsString>) -> Option<Secret> {
        if let Some(password) = &self.password {
            return Some(password.clone());
        }
        if !self.password_from_environment {
            return None;
        }
        let text = |name| env(name).map(|value| value.to_string_lossy().into_owned());
        if let Some(password) = text("PGPASSWORD") {
            return Some(Secret::new(password));
        }
        let user = self
            .user
            .clone()
            .or_else(|| text("PGUSER"))
            .or_else(|| text("USER"))?;
        let dbname = self.dbname.clone().unwrap_or_else(|| user.clone());
        let file = env("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
        let text = read_password_file(&file)?;
        let port = self.port.to_string();
        let wanted = [
            self.host.as_str(),
            port.as_str(),
            dbname.as_str(),
            user.as_str(),
        ];
        text.lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| {
                let fields = pgpass_fields(line);
                let [host, port, db, user, password] = fields.as_slice() else {
                    return None;
                };
                let matches = [host, port, db, user]
                    .iter()
                    .zip(wanted)
                    .all(|(field, value)| *field == "*" || *field == value);
                matches.then(|| Secret::new(password.clone()))
            })
    }
}

/// The text of the password file `path`, as libpq takes it: only a regular file that neither
/// its group nor others may read or write (a warning names the file otherwise, as libpq's).
fn read_password_file(path: &Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o077 != 0 {
            spark_datasource::log::warn(&format!(
                "the password file {} is ignored: it has group or world access; its \
                 permissions should be u=rw (0600) or less",
                path.display()
            ));
            return None;
        }
    }
    std::fs::read_to_string(path).ok()
}

/// The fields of a line of a password file: separated by `:`, where `\:` and `\\` escape.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

/// The parts of `postgresql://[user[:password]@]host[:port][/database][?key=value&...]`, or of
/// the JDBC form `jdbc:postgresql://...`. Query parameters `user`, `password`, `host`, `port`
/// and `connectTimeout` (the JDBC driver's names) are taken; others are ignored.
fn parse_url(url: &str) -> Result<Connection> {
    // Never repeat the URL: it may hold a password.
    let malformed = |why: &str| {
        Error::Option(format!(
            "option `url` must be postgresql://host[:port]/database or \
             jdbc:postgresql://host[:port]/database: {why}"
        ))
    };
    let rest = url.strip_prefix("jdbc:").unwrap_or(url);
    let rest = rest
        .strip_prefix("postgresql://")
        .or_else(|| rest.strip_prefix("postgres://"))
        .ok_or_else(|| malformed("it has another scheme"))?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, dbname) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => (Some(userinfo), hostport),
        None => (None, authority),
    };
    let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or_else(|| malformed("an IPv6 host lacks its `]`"))?;
        (host, after.strip_prefix(':'))
    } else {
        match hostport.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    let port = match port {
        None | Some("") => DEFAULT_PORT,
        Some(port) => port
            .parse()
            .map_err(|_| malformed("its port is not a number"))?,
    };
    let host = if host.is_empty() {
        "localhost".to_string()
    } else {
        decode(host)
    };
    let mut connection = Connection::to(host, port, (!dbname.is_empty()).then(|| decode(dbname)));
    if let Some(userinfo) = userinfo {
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (userinfo, None),
        };
        connection.user = (!user.is_empty()).then(|| decode(user));
        connection.password = password.map(|p| Secret::new(decode(p)));
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(value);
        match key {
            "user" => connection.user = Some(value),
            "password" => connection.password = Some(Secret::new(value)),
            "host" => connection.host = value,
            "port" => {
                connection.port = value
                    .parse()
                    .map_err(|_| malformed("its parameter `port` is not a number"))?
            }
            "connectTimeout" | "connect_timeout" => {
                connection.connect_timeout = value
                    .parse()
                    .map_err(|_| malformed("its parameter `connectTimeout` is not a number"))?
            }
            _ => {}
        }
    }
    Ok(connection)
}

impl Connection {
    /// A connection to `host`, `port` and `dbname` with the defaults of every other setting,
    /// which `Connection::from_options` sets from the options, the URL and the environment.
    fn to(host: String, port: u16, dbname: Option<String>) -> Connection {
        Connection {
            host,
            port,
            dbname,
            user: None,
            password: None,
            connect_timeout: 10,
            sslmode: SslMode::Require,
            root_cert: None,
            client_cert: None,
            password_without_tls: false,
            channel_binding: Binding::Require,
            min_scram_iterations: DEFAULT_MIN_ITERATIONS,
            password_from_environment: false,
        }
    }
}

/// The value of the query parameter `key` of a URL.
fn connection_param(url: &str, key: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| decode(v))
}

/// `%xx` escapes decoded, as in URLs.
fn decode(text: &str) -> String {
    let raw = text.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let escaped = raw
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (raw[i], escaped) {
            (b'%', Some(byte)) => (bytes.push(byte), i += 3),
            (byte, _) => (bytes.push(byte), i += 1),
        };
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A connection that could not be opened: why, and whether trying again later may succeed.
#[derive(Debug)]
pub struct ConnectError {
    pub error: Error,
    pub transient: bool,
}

/// Whether `error` may pass by itself: the server refuses connections or closed this one
/// (restarting), is starting up or shutting down, or the connection broke.
pub fn is_transient(error: &tokio_postgres::Error) -> bool {
    if let Some(db) = error.as_db_error() {
        return is_transient_state(db.code().code());
    }
    if error.is_closed() {
        return true;
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return is_transient_io(io);
        }
        source = cause.source();
    }
    false
}

/// [`is_transient`] of the server's SQLSTATE: an administrator's or a crash's shutdown, a
/// server starting up (57P01, 57P02, 57P03), or any connection exception (class 08).
pub fn is_transient_state(code: &str) -> bool {
    ["57P01", "57P02", "57P03"].contains(&code) || code.starts_with("08")
}

/// [`is_transient`] of an error of the socket.
pub fn is_transient_io(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::UnexpectedEof
            | ErrorKind::NotFound
            | ErrorKind::TimedOut
    )
}

/// A connection for the driver's planning and commits and a task's writes: the asynchronous
/// client on a runtime of its own, which runs the connection while the session waits.
pub struct Session {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

/// The calls of the client that planning and writes make, each waited for.
impl Session {
    pub fn batch_execute(&self, statements: &str) -> Result<(), tokio_postgres::Error> {
        self.wait(self.client.batch_execute(statements))
    }

    pub fn prepare(&self, query: &str) -> Result<Statement, tokio_postgres::Error> {
        self.wait(self.client.prepare(query))
    }

    pub fn query(
        &self,
        query: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        self.wait(self.client.query(query, params))
    }

    pub fn query_opt(
        &self,
        query: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        self.wait(self.client.query_opt(query, params))
    }

    pub fn query_one(
        &self,
        query: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, tokio_postgres::Error> {
        self.wait(self.client.query_one(query, params))
    }

    /// Runs `COPY ... FROM STDIN` with `chunks` as its data.
    pub fn copy_in(
        &self,
        statement: &str,
        chunks: impl IntoIterator<Item = Bytes>,
    ) -> Result<u64, tokio_postgres::Error> {
        self.wait(async {
            let sink = self.client.copy_in::<_, Bytes>(statement).await?;
            let mut sink = pin!(sink);
            for chunk in chunks {
                sink.feed(chunk).await?;
            }
            sink.flush().await?;
            sink.as_mut().finish().await
        })
    }

    /// Waits for `future`, polling the connection meanwhile.
    pub fn wait<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The asynchronous client, for work that [`Session::wait`] waits for.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

/// What a user needs from a client error: the server's message (with its detail and hint)
/// when the server sent one, else the client's, with its cause.
pub fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(" ({detail})"));
        }
        if let Some(hint) = db.hint() {
            text.push_str(&format!("; hint: {hint}"));
        }
        return text;
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(&format!(": {cause_text}"));
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_url_forms_give_the_host_the_port_and_the_database() -> Result<()> {
        for url in [
            "postgresql://db.example:5433/shop",
            "jdbc:postgresql://db.example:5433/shop",
        ] {
            let c = parse_url(url)?;
            assert_eq!(
                (c.host.as_str(), c.port, c.dbname.as_deref()),
                ("db.example", 5433, Some("shop"))
            );
        }
        let c = parse_url("postgres://ann:s%3Acret@[::1]/shop?connectTimeout=3")?;
        assert_eq!(
            (c.host.as_str(), c.port, c.user.as_deref()),
            ("::1", 5432, Some("ann"))
        );
        assert_eq!(c.password.as_ref().map(Secret::expose), Some("s:cret"));
        assert_eq!(c.connect_timeout, 3);
        Ok(())
    }

    #[test]
    fn a_malformed_url_is_refused_without_repeating_it() {
        let error = parse_url("mysql://ann:hunter2@h/db")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "option `url` must be postgresql://host[:port]/database or \
                 jdbc:postgresql://host[:port]/database: it has another scheme"
            )
        );
    }

    #[test]
    fn a_password_file_that_others_may_read_is_ignored_as_libpq_does() -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:pw\n")?;
        for (mode, read) in [(0o600, true), (0o400, true), (0o640, false), (0o604, false)] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode))?;
            assert_eq!(read_password_file(&file).is_some(), read, "mode {mode:o}");
        }
        assert_eq!(read_password_file(dir.path()), None);
        Ok(())
    }

    #[test]
    fn the_machines_password_is_taken_only_when_an_option_asks_for_it(
    ) -> std::result::Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "h:5432:db:ann:from-file\n")?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        let with_file = |name: &str| (name == "PGPASSFILE").then(|| file.clone().into_os_string());
        let with_variable = |name: &str| (name == "PGPASSWORD").then(|| OsString::from("from-env"));
        let mut connection = parse_url("postgresql://ann@h/db")?;
        for env in [
            &with_file as &dyn Fn(&str) -> Option<OsString>,
            &with_variable,
        ] {
            assert!(connection.password_in(env).is_none());
        }
        connection.password_from_environment = true;
        let taken = |connection: &Connection, env: &dyn Fn(&str) -> Option<OsString>| {
            connection
                .password_in(env)
                .map(|password| password.expose().to_string())
        };
        assert_eq!(taken(&connection, &with_file).as_deref(), Some("from-file"));
        assert_eq!(
            taken(&connection, &with_variable).as_deref(),
            Some("from-env")
        );
        // The options' password comes first, with or without the option.
        connection.password = Some(Secret::new("given".to_string()));
        assert_eq!(taken(&connection, &with_variable).as_deref(), Some("given"));
        Ok(())
    }

    #[test]
    fn password_file_lines_split_on_unescaped_colons() {
        assert_eq!(
            pgpass_fields(r"h:5432:*:ann:pa\:ss\\"),
            ["h", "5432", "*", "ann", r"pa:ss\"]
        );
    }
}
