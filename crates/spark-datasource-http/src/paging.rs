//! A listing of an API, page by page: where its records are in a page, and how to ask for the
//! next one: the `Link` header's `rel="next"` (GitHub, GitLab), a page number, an offset, or a
//! cursor that a page gives. [`Listing::pages`] asks for a page only when the one before is
//! used up, so a reader that stops (a `LIMIT` reached, a cancelled task) asks no more.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spark_datasource::{Error, Result};

use crate::client::{Reply, Session};

/// How to ask for the page after one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Paging {
    /// One page: the answer holds every record.
    Single,
    /// The URL of the `Link` header's `rel="next"`, until a page has none.
    Link,
    /// `?<param>=first`, then `first + step`, `first + 2 step`...: until a page has no record.
    /// A step above 1 lets partitions share the pages: partition `k` of `n` starts at
    /// `first + k` with a step of `n`.
    PageNumber {
        param: String,
        first: u64,
        step: u64,
    },
    /// `?<offset>=0&<limit>=size`, then `size`, `2 size`...: until a page has fewer than
    /// `size` records.
    Offset {
        offset: String,
        limit: String,
        size: u64,
    },
    /// `?<param>=<the cursor the page before gave>`, from the first page without it, until a
    /// page gives none (absent, null or empty).
    Cursor { param: String, next: Next },
}

/// Where a page gives the next cursor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Next {
    /// A JSON pointer into the body (RFC 6901), such as `/meta/next_cursor`.
    Body(String),
    /// A header.
    Header(String),
}

/// A listing: its path and query, its paging, and where the records are in a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    pub path: String,
    pub query: Vec<(String, String)>,
    pub paging: Paging,
    /// A JSON pointer to the records' array in a page; empty for a page that is the array.
    pub records: String,
}

impl Listing {
    /// The records at `path`, one page, the page being the array of records.
    pub fn new(path: &str) -> Listing {
        Listing {
            path: path.to_string(),
            query: Vec::new(),
            paging: Paging::Single,
            records: String::new(),
        }
    }

    /// Adds `?name=value` to every page's request.
    pub fn query(mut self, name: &str, value: impl ToString) -> Listing {
        self.query.push((name.to_string(), value.to_string()));
        self
    }

    /// Pages as `paging` says.
    pub fn paging(mut self, paging: Paging) -> Listing {
        self.paging = paging;
        self
    }

    /// The records are the array at the JSON pointer `pointer` of a page (`/items`).
    pub fn records(mut self, pointer: &str) -> Listing {
        self.records = pointer.to_string();
        self
    }

    /// The pages' records, one request a page, asked for as they are used.
    pub fn pages<'l, 's, 'a>(&'l self, session: &'s mut Session<'a>) -> Pages<'l, 's, 'a> {
        Pages {
            listing: self,
            session,
            next: Some(Ask::First),
            page: 0,
        }
    }
}

/// What the next request is.
enum Ask {
    First,
    Url(String),
    Extra(Vec<(String, String)>),
}

/// The pages of a listing; an error ends them.
pub struct Pages<'l, 's, 'a> {
    listing: &'l Listing,
    session: &'s mut Session<'a>,
    next: Option<Ask>,
    /// Pages read so far.
    page: u64,
}

impl Iterator for Pages<'_, '_, '_> {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        let ask = self.next.take()?;
        let result = self.read(ask);
        if result.is_err() {
            self.next = None;
        }
        Some(result)
    }
}

impl Pages<'_, '_, '_> {
    fn read(&mut self, ask: Ask) -> Result<Vec<Value>> {
        let listing = self.listing;
        let mut query = listing.query.clone();
        let target = match ask {
            // A next link holds the whole query.
            Ask::Url(url) => {
                query.clear();
                url
            }
            Ask::First => {
                query.extend(first_extra(&listing.paging));
                listing.path.clone()
            }
            Ask::Extra(extra) => {
                query.extend(extra);
                listing.path.clone()
            }
        };
        let reply = self.session.get(&target, &query)?;
        let body = reply.json()?;
        let records = match body.pointer(&listing.records) {
            Some(Value::Array(records)) => records.clone(),
            Some(Value::Null) => Vec::new(),
            _ => {
                return Err(Error::msg(format!(
                    "page {} of {} has no array of records at `{}`: set the records' JSON \
                     pointer to where the page holds them",
                    self.page + 1,
                    listing.path,
                    listing.records
                )))
            }
        };
        self.page += 1;
        self.next = next_ask(
            &listing.paging,
            &reply,
            &body,
            records.len() as u64,
            self.page,
        )?;
        Ok(records)
    }
}

/// The paging parameters of the first page.
fn first_extra(paging: &Paging) -> Vec<(String, String)> {
    match paging {
        Paging::PageNumber { param, first, .. } => vec![(param.clone(), first.to_string())],
        Paging::Offset {
            offset,
            limit,
            size,
        } => vec![
            (offset.clone(), "0".into()),
            (limit.clone(), size.to_string()),
        ],
        _ => Vec::new(),
    }
}

/// The request after the `pages`-th page, which held `count` records; `None` at the end.
fn next_ask(
    paging: &Paging,
    reply: &Reply,
    body: &Value,
    count: u64,
    pages: u64,
) -> Result<Option<Ask>> {
    Ok(match paging {
        Paging::Single => None,
        Paging::Link => reply.header("link").and_then(next_link).map(Ask::Url),
        Paging::PageNumber { param, first, step } => (count > 0).then(|| {
            let page = first + step.max(&1) * pages;
            Ask::Extra(vec![(param.clone(), page.to_string())])
        }),
        Paging::Offset {
            offset,
            limit,
            size,
        } => (count >= *size && *size > 0).then(|| {
            let at = size * pages;
            Ask::Extra(vec![
                (offset.clone(), at.to_string()),
                (limit.clone(), size.to_string()),
            ])
        }),
        Paging::Cursor { param, next } => {
            let cursor = match next {
                Next::Header(name) => reply.header(name).map(str::to_string),
                Next::Body(pointer) => match body.pointer(pointer) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                },
            };
            cursor
                .filter(|c| !c.is_empty())
                .map(|c| Ask::Extra(vec![(param.clone(), c)]))
        }
    })
}

/// The URL of `rel="next"` in a `Link` header (RFC 8288): `<url>; rel="next", <url>; rel="last"`.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|link| {
        let (target, params) = link.split_once(';')?;
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        let is_next = params.split(';').any(|param| {
            let Some((name, value)) = param.split_once('=') else {
                return false;
            };
            let value = value.trim().trim_matches('"');
            name.trim().eq_ignore_ascii_case("rel")
                && value
                    .split_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case("next"))
        });
        is_next.then(|| target.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_link_is_found_among_others() {
        let header =
            r#"<https://api.x.com/i?page=3>; rel="next", <https://api.x.com/i?page=9>; rel="last""#;
        assert_eq!(
            next_link(header).as_deref(),
            Some("https://api.x.com/i?page=3")
        );
        assert_eq!(
            next_link(r#"<https://api.x.com/i?page=1>; rel="prev""#),
            None
        );
        assert_eq!(next_link(r#"<u>; rel="prev next""#).as_deref(), Some("u"));
        assert_eq!(next_link("garbage"), None);
    }
}
