//! A listing of an API, page by page: where its records are in a page, and how to ask for the
//! next one: the `Link` header's `rel="next"` (GitHub, GitLab), a page number, an offset, or a
//! cursor that a page gives. [`Listing::pages`] asks for a page only when the one before is
//! used up, so a reader that stops (a `LIMIT` reached, a cancelled task) asks no more.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use spark_datasource::{Error, Result};

use crate::client::Session;

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

/// A page of a listing: its body, and where its records are.
pub struct Page {
    body: Vec<u8>,
    pointer: String,
    /// Which page of the listing it is, from 1, for messages.
    number: u64,
}

impl Page {
    /// A page of `body` whose records are the body itself, for tests.
    #[doc(hidden)]
    pub fn for_tests(body: &str) -> Page {
        Page {
            body: body.as_bytes().to_vec(),
            pointer: String::new(),
            number: 1,
        }
    }

    /// The records, each the JSON text of one record as the page holds it: no tree of values
    /// is built ([`Records::push`](crate::Records::push) decodes the text into columns).
    ///
    /// # Errors
    /// A page that is not JSON, or has no array at the records' pointer.
    pub fn records(&self) -> Result<Vec<&RawValue>> {
        let text = std::str::from_utf8(&self.body)
            .map_err(|_| Error::msg(format!("page {} is not UTF-8 text", self.number)))?;
        let mut at: &RawValue = serde_json::from_str(text)
            .map_err(|e| Error::msg(format!("page {} is not JSON: {e}", self.number)))?;
        for part in self.pointer.split('/').skip(1) {
            let part = part.replace("~1", "/").replace("~0", "~");
            at = self.member(at, &part)?;
        }
        if at.get().trim() == "null" {
            return Ok(Vec::new());
        }
        serde_json::from_str(at.get()).map_err(|_| self.missing())
    }

    /// The records as JSON values, to look into them.
    ///
    /// # Errors
    /// As [`Page::records`].
    pub fn values(&self) -> Result<Vec<Value>> {
        self.records()?
            .iter()
            .map(|record| serde_json::from_str(record.get()))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::msg(format!("page {} is not JSON: {e}", self.number)))
    }

    /// The member `part` of the object or array `at`.
    fn member<'p>(&self, at: &'p RawValue, part: &str) -> Result<&'p RawValue> {
        let found = match at.get().trim_start().as_bytes().first() {
            Some(b'{') => {
                let object: HashMap<String, &RawValue> =
                    serde_json::from_str(at.get()).map_err(|_| self.missing())?;
                object.get(part).copied()
            }
            Some(b'[') => {
                let array: Vec<&RawValue> =
                    serde_json::from_str(at.get()).map_err(|_| self.missing())?;
                part.parse::<usize>()
                    .ok()
                    .and_then(|i| array.get(i).copied())
            }
            _ => None,
        };
        found.ok_or_else(|| self.missing())
    }

    fn missing(&self) -> Error {
        Error::msg(format!(
            "page {} has no array of records at `{}`: set the records' JSON pointer to where the \
             page holds them",
            self.number, self.pointer
        ))
    }
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
    type Item = Result<Page>;

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
    fn read(&mut self, ask: Ask) -> Result<Page> {
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
        self.page += 1;
        let link = reply.header("link").and_then(next_link);
        let header_cursor = match &listing.paging {
            Paging::Cursor {
                next: Next::Header(name),
                ..
            } => reply.header(name).map(str::to_string),
            _ => None,
        };
        let page = Page {
            body: reply.body,
            pointer: listing.records.clone(),
            number: self.page,
        };
        let count = page.records()?.len() as u64;
        let cursor = match &listing.paging {
            Paging::Cursor {
                next: Next::Body(pointer),
                ..
            } => body_cursor(&page, pointer)?,
            _ => header_cursor,
        };
        self.next = next_ask(&listing.paging, link, cursor, count, self.page);
        Ok(page)
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

/// The cursor at `pointer` of the page's body: a string or a number.
fn body_cursor(page: &Page, pointer: &str) -> Result<Option<String>> {
    let body: Value = serde_json::from_slice(&page.body)
        .map_err(|e| Error::msg(format!("page {} is not JSON: {e}", page.number)))?;
    Ok(match body.pointer(pointer) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

/// The request after the `pages`-th page, which held `count` records and gave the next link
/// `link` and the cursor `cursor`; `None` at the end.
fn next_ask(
    paging: &Paging,
    link: Option<String>,
    cursor: Option<String>,
    count: u64,
    pages: u64,
) -> Option<Ask> {
    match paging {
        Paging::Single => None,
        Paging::Link => link.map(Ask::Url),
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
        Paging::Cursor { param, .. } => cursor
            .filter(|c| !c.is_empty())
            .map(|c| Ask::Extra(vec![(param.clone(), c)])),
    }
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

    #[test]
    fn records_are_found_at_their_pointer_as_text() -> Result<()> {
        let page = |body: &str, pointer: &str| Page {
            body: body.as_bytes().to_vec(),
            pointer: pointer.to_string(),
            number: 1,
        };
        let nested = page(
            r#"{"data": {"items": [{"a": 1}, {"a/b": [2]}]}}"#,
            "/data/items",
        );
        let texts: Vec<String> = nested
            .records()?
            .iter()
            .map(|r| r.get().to_string())
            .collect();
        assert_eq!(texts, [r#"{"a": 1}"#, r#"{"a/b": [2]}"#]);
        assert_eq!(page("[[1], [2, 3]]", "/1").records()?.len(), 2);
        assert_eq!(page(r#"{"items": null}"#, "/items").records()?.len(), 0);
        let error = page(r#"{"data": {}}"#, "/items")
            .records()
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "page 1 has no array of records at `/items`: set the records' JSON pointer to \
                 where the page holds them"
            )
        );
        Ok(())
    }
}
