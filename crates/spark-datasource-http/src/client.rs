//! The API and a task's session with it: where it is, how to sign in, how to wait and try again,
//! and how many requests a task may make.
//!
//! [`Api`] is plain settings: it serializes with a reader and crosses to the executors (its
//! credentials too, as every option does: see the book's security chapter). The connections
//! live in a [`Session`], made on the executor for one task and never serialized.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result, Secret};

use crate::retry::{self, Retries};

/// How requests sign in.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(Secret),
    /// `Authorization: Basic <user:password in base64>`.
    Basic { user: String, password: Secret },
    /// A header of the API's own, such as `X-Api-Key: <key>`.
    Header { name: String, value: Secret },
}

/// An HTTP API: its base URL, sign-in, headers, retries and budget.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Api {
    base: String,
    auth: Option<Auth>,
    headers: Vec<(String, String)>,
    retries: Retries,
    /// The most requests a session makes, retries included.
    budget: Option<u64>,
    timeout_secs: u64,
    /// The largest body read, in bytes.
    max_body: u64,
}

impl Api {
    /// The API at `base` (`https://api.example.com`, or `http://` for a test server), with no
    /// sign-in, the default retries, no budget, 30 s a request and bodies up to 64 MiB.
    ///
    /// # Errors
    /// A `base` that is not an `http://` or `https://` URL, named with the option to fix.
    pub fn new(base: &str, option: &str) -> Result<Api> {
        let scheme_ok = base.starts_with("https://") || base.starts_with("http://");
        if !scheme_ok || base.split("://").nth(1).is_none_or(str::is_empty) {
            return Err(Error::Option(format!(
                "option `{option}` must be the API's URL, such as https://api.example.com, got \
                 `{base}`"
            )));
        }
        Ok(Api {
            base: base.trim_end_matches('/').to_string(),
            auth: None,
            headers: Vec::new(),
            retries: Retries::default(),
            budget: None,
            timeout_secs: 30,
            max_body: 64 << 20,
        })
    }

    /// Signs every request in with `auth`.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sends `name: value` with every request (`Accept`, an API version).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// How a failed request is tried again.
    pub fn retries(mut self, retries: Retries) -> Self {
        self.retries = retries;
        self
    }

    /// At most `requests` requests a session, retries included: a metered API's quota.
    pub fn budget(mut self, requests: u64) -> Self {
        self.budget = Some(requests);
        self
    }

    /// The longest a request may take, connecting and reading.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout_secs = timeout.as_secs().max(1);
        self
    }

    /// The base URL, for messages (it holds no credential: those are in [`Auth`]).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A session of one task, which stops waiting and asking when `cancelled` answers true
    /// (the task was killed, or Spark needs no more rows: `BatchSender::is_cancelled`).
    pub fn session<'a>(&'a self, cancelled: impl Fn() -> bool + Send + 'a) -> Session<'a> {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(self.timeout_secs)))
            .build();
        Session {
            api: self,
            agent: config.new_agent(),
            cancelled: Box::new(cancelled),
            requests: 0,
        }
    }
}

/// An answer of the API.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first value of the header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    ///
    /// # Errors
    /// A body that is not JSON, with where it went wrong.
    pub fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.body).map_err(|e| {
            Error::msg(format!(
                "the API answered with a body that is not JSON: {e}"
            ))
        })
    }
}

/// One task's connections to an [`Api`], and the count of its requests.
pub struct Session<'a> {
    api: &'a Api,
    agent: ureq::Agent,
    cancelled: Box<dyn Fn() -> bool + Send + 'a>,
    requests: u64,
}

impl Session<'_> {
    /// The requests made so far, retries included.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Whether the task was cancelled.
    pub fn is_cancelled(&self) -> bool {
        (self.cancelled)()
    }

    /// `GET` of `target` (a path under the base URL, or a whole URL the API gave, such as a
    /// `Link`'s) with `query`, tried again on a 429, a 5xx, a timeout or a lost connection, as
    /// [`Retries`] says.
    ///
    /// # Errors
    /// [`Error::Cancelled`] once cancelled; the budget spent; an answer of 4xx other than 429
    /// (401 and 403 say to check the credentials); the last failure when the tries are spent.
    /// No message holds a credential or a query's values.
    pub fn get(&mut self, target: &str, query: &[(String, String)]) -> Result<Reply> {
        let url = self.url(target)?;
        let mut attempt = 0;
        loop {
            if self.is_cancelled() {
                return Err(Error::Cancelled);
            }
            self.spend(&url)?;
            let retries = &self.api.retries;
            let (wait, failure) = match self.send(&url, query) {
                Ok(reply) if !retry::is_retried(reply.status) => return self.checked(&url, reply),
                Ok(reply) => (
                    retry::wait_of(reply.header("retry-after"), retries, attempt),
                    Ok(reply),
                ),
                Err(why) => (retry::backoff(retries, attempt), Err(why)),
            };
            attempt += 1;
            if attempt >= retries.attempts {
                return Err(match failure {
                    Ok(reply) => status_error(&url, &reply, attempt),
                    Err(why) => Error::msg(format!(
                        "GET {} failed {attempt} times, the last: {why}",
                        without_query(&url)
                    )),
                });
            }
            retry::sleep(wait, &*self.cancelled)?;
        }
    }

    fn url(&self, target: &str) -> Result<String> {
        if target.starts_with("http://") || target.starts_with("https://") {
            // A page's URL that the API gave: only on the API's own host, so that a next link
            // cannot send the credentials elsewhere.
            if !same_origin(target, &self.api.base) {
                return Err(Error::msg(format!(
                    "the API gave the URL {} for the next page, outside {}: the credentials go \
                     to the API's own origin only",
                    without_query(target),
                    self.api.base
                )));
            }
            return Ok(target.to_string());
        }
        Ok(format!(
            "{}/{}",
            self.api.base,
            target.trim_start_matches('/')
        ))
    }

    fn spend(&mut self, url: &str) -> Result<()> {
        if let Some(budget) = self.api.budget {
            if self.requests >= budget {
                return Err(Error::msg(format!(
                    "the task made its budget of {budget} requests before GET {}: raise the \
                     budget, or read less (a filter, a limit)",
                    without_query(url)
                )));
            }
        }
        self.requests += 1;
        Ok(())
    }

    fn send(&self, url: &str, query: &[(String, String)]) -> std::result::Result<Reply, String> {
        let mut request = self.agent.get(url);
        for (name, value) in &self.api.headers {
            request = request.header(name, value);
        }
        request = match &self.api.auth {
            None => request,
            Some(Auth::Bearer(token)) => {
                request.header("Authorization", format!("Bearer {}", token.expose()))
            }
            Some(Auth::Basic { user, password }) => {
                let pair = format!("{user}:{}", password.expose());
                request.header(
                    "Authorization",
                    format!("Basic {}", base64(pair.as_bytes())),
                )
            }
            Some(Auth::Header { name, value }) => request.header(name, value.expose()),
        };
        for (name, value) in query {
            request = request.query(name, value);
        }
        // ureq's error names the host and the failure, never a header.
        let mut response = request.call().map_err(|e| e.to_string())?;
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| {
                Some((
                    name.as_str().to_ascii_lowercase(),
                    value.to_str().ok()?.to_string(),
                ))
            })
            .collect();
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(self.api.max_body)
            .read_to_vec()
            .map_err(|e| e.to_string())?;
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    fn checked(&self, url: &str, reply: Reply) -> Result<Reply> {
        if (200..300).contains(&reply.status) {
            return Ok(reply);
        }
        Err(status_error(url, &reply, 1))
    }
}

/// The error of an answer that is not a success.
fn status_error(url: &str, reply: &Reply, attempts: u32) -> Error {
    let url = without_query(url);
    let tries = match attempts {
        1 => String::new(),
        n => format!(" (tried {n} times)"),
    };
    let hint = match reply.status {
        401 | 403 => ": check the credentials (the token or password options)",
        404 => ": check the path and the options that make it",
        429 => ": the API limits the rate; raise the retries or read less",
        _ => "",
    };
    let body: String = String::from_utf8_lossy(&reply.body)
        .chars()
        .take(200)
        .collect();
    Error::msg(format!(
        "GET {url} answered {}{tries}{hint}; the API said: {body}",
        reply.status
    ))
}

fn without_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// Whether `url` has the scheme, host and port of `base`.
fn same_origin(url: &str, base: &str) -> bool {
    let origin = |u: &str| -> String {
        let (scheme, rest) = u.split_once("://").unwrap_or(("", u));
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        format!("{scheme}://{}", authority.to_ascii_lowercase())
    };
    origin(url) == origin(base)
}

/// Standard base64 with padding, for `Basic` (a dependency for twenty lines would be more).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648_s() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"user:p@ss"), "dXNlcjpwQHNz");
    }

    #[test]
    fn a_next_link_to_another_origin_is_refused() {
        assert!(same_origin(
            "https://api.x.com/a?page=2",
            "https://API.x.com"
        ));
        assert!(!same_origin("https://evil.com/a", "https://api.x.com"));
        assert!(!same_origin("http://api.x.com/a", "https://api.x.com"));
        assert!(!same_origin(
            "https://api.x.com:8443/a",
            "https://api.x.com"
        ));
    }

    #[test]
    fn a_base_that_is_not_a_url_is_named_with_its_option() {
        let error = Api::new("api.example.com", "url")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "option `url` must be the API's URL, such as https://api.example.com, got \
                 `api.example.com`"
            )
        );
    }
}
