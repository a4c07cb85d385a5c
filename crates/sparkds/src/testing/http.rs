//! A scripted HTTP server for the tests of a connector of an HTTP API: a handler answers each
//! request, the server counts and keeps what it was asked, and faults (an answer of 429 with
//! `Retry-After`, a 500, a 401) replace the handler's answer where a test says. It listens on
//! 127.0.0.1 only, on a port of its own, with HTTP/1.1 and persistent connections, as the
//! clients under test expect; it stops when dropped.
//!
//! ```no_run
//! use sparkds::testing::http::{HttpServer, Response};
//!
//! let server = HttpServer::start(|request| {
//!     let page: u64 = request.query("page").and_then(|p| p.parse().ok()).unwrap_or(1);
//!     Response::json(serde_json::json!([{ "id": page }]))
//! })?;
//! server.fail_every(5, Response::status(429).header("Retry-After", "0"));
//! let url = format!("{}/items", server.url());
//! # let _ = url;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the server answers a request with, when no fault takes its place.
type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query's parameters, decoded, in order.
    pub query: Vec<(String, String)>,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of the query parameter `key`.
    pub fn query(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: a status, headers and a body.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// 200 with `value` as JSON.
    pub fn json(value: serde_json::Value) -> Response {
        Response::status(200)
            .header("Content-Type", "application/json")
            .body(value.to_string().into_bytes())
    }

    /// `status` with an empty body.
    pub fn status(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The same answer with the header `name: value` too.
    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The same answer with `body`.
    pub fn body(mut self, body: Vec<u8>) -> Response {
        self.body = body;
        self
    }
}

/// The faults that take the handler's place.
#[derive(Default)]
struct Faults {
    /// Answers for the next requests, in order.
    next: VecDeque<Response>,
    /// An answer for every n-th request (1-based count of all requests).
    every: Option<(usize, Response)>,
}

/// What the server's threads share with it.
struct Shared {
    handler: Box<Handler>,
    requests: Mutex<Vec<Request>>,
    faults: Mutex<Faults>,
    stopped: AtomicBool,
}

/// A running server; dropping it stops it.
pub struct HttpServer {
    address: std::net::SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Starts a server on 127.0.0.1 that answers with `handler`.
    ///
    /// # Errors
    /// When no port of 127.0.0.1 can be bound.
    pub fn start(
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            requests: Mutex::new(Vec::new()),
            faults: Mutex::new(Faults::default()),
            stopped: AtomicBool::new(false),
        });
        let serving = Arc::clone(&shared);
        let acceptor = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if serving.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let connection = Arc::clone(&serving);
                std::thread::spawn(move || serve(stream, &connection));
            }
        });
        Ok(HttpServer {
            address,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request so far, in the order the server read them.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests the server has read.
    pub fn request_count(&self) -> usize {
        lock(&self.shared.requests).len()
    }

    /// The next `count` requests get `response` instead of the handler's answer.
    pub fn fail_next(&self, count: usize, response: Response) {
        let mut faults = lock(&self.shared.faults);
        faults.next.extend(std::iter::repeat_n(response, count));
    }

    /// Every `every`-th request (counting all of them, from 1) gets `response`.
    ///
    /// # Panics
    /// When `every` is 0.
    pub fn fail_every(&self, every: usize, response: Response) {
        assert!(
            every > 0,
            "fail_every(0, ..) would fail no request: give 1 or more"
        );
        lock(&self.shared.faults).every = Some((every, response));
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // Wakes the acceptor, which then sees `stopped`.
        let _ = TcpStream::connect(self.address);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// A poisoned lock means a test thread panicked: the data is still what it was.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Answers the requests of one connection until the client closes it.
fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    // Answers go out at once: with Nagle's algorithm, a client that delays its ACKs waits
    // 40 ms for each.
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while !shared.stopped.load(Ordering::SeqCst) {
        let Ok(Some(request)) = read_request(&mut reader) else {
            break;
        };
        let response = answer(shared, &request);
        let close = request
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        if write_response(&mut writer, &response).is_err() || close {
            break;
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

/// The fault of this request, else the handler's answer; the request is kept.
fn answer(shared: &Shared, request: &Request) -> Response {
    let count = {
        let mut requests = lock(&shared.requests);
        requests.push(request.clone());
        requests.len()
    };
    let fault = {
        let mut faults = lock(&shared.faults);
        match faults.next.pop_front() {
            Some(response) => Some(response),
            None => faults
                .every
                .as_ref()
                .filter(|(every, _)| count % every == 0)
                .map(|(_, response)| response.clone()),
        }
    };
    fault.unwrap_or_else(|| (shared.handler)(request))
}

/// One request of HTTP/1.1, or `None` when the client closed the connection.
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a malformed request line",
        ));
    };
    let (method, target) = (method.to_string(), target.to_string());
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Ok(Some(Request {
        method,
        path: percent_decode(path),
        query: query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(key), percent_decode(value))
            })
            .collect(),
        headers,
        body,
    }))
}

fn write_response(writer: &mut impl Write, response: &Response) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", response.body.len()));
    // One write of the head and the body.
    let mut message = head.into_bytes();
    message.extend_from_slice(&response.body);
    writer.write_all(&message)?;
    writer.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// `%XX` and `+` of a query or a path, decoded; anything malformed is kept as it is.
fn percent_decode(text: &str) -> String {
    let hex = |byte: u8| (byte as char).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn get(url: &str, path: &str) -> io::Result<(u16, String)> {
        let address = url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address)?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )?;
        let mut text = String::new();
        stream.read_to_string(&mut text)?;
        let status = text[9..12].parse().unwrap_or(0);
        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        Ok((status, body))
    }

    #[test]
    fn it_answers_with_the_handler_and_keeps_the_requests() -> io::Result<()> {
        let server = HttpServer::start(|request| {
            Response::json(serde_json::json!({"page": request.query("page")}))
        })?;
        let (status, body) = get(&server.url(), "/items?page=2&q=a%20b+c")?;
        assert_eq!((status, body.as_str()), (200, r#"{"page":"2"}"#));
        let requests = server.requests();
        assert_eq!(requests[0].path, "/items");
        assert_eq!(requests[0].query("q"), Some("a b c"));
        Ok(())
    }

    #[test]
    fn faults_take_the_handler_s_place_where_the_test_says() -> io::Result<()> {
        let server = HttpServer::start(|_| Response::json(serde_json::json!([])))?;
        server.fail_next(1, Response::status(401));
        server.fail_every(3, Response::status(429).header("Retry-After", "0"));
        let statuses: Vec<u16> = (0..4)
            .map(|_| get(&server.url(), "/").map(|(status, _)| status))
            .collect::<io::Result<_>>()?;
        assert_eq!(statuses, [401, 200, 429, 200]);
        assert_eq!(server.request_count(), 4);
        Ok(())
    }
}
