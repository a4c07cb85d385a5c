//! What the book tests share: where the book is, its chapters in the order of `SUMMARY.md`, and
//! a small Markdown reader for what the tests check (fenced blocks, links, images, headings and
//! `{{#include}}` directives). It reads Markdown line by line, as far as the book needs: fences
//! open and close with ``` at the start of a line, and links are `[text](target)` or HTML
//! `src="..."`/`href="..."` attributes.

use std::path::{Path, PathBuf};

#[path = "../../support/checkout.rs"]
pub mod checkout;
pub mod tutorial;

/// The root of this repository.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `book/` of this repository.
pub fn book_dir() -> PathBuf {
    repo_root().join("book")
}

/// `book/src/`.
pub fn src_dir() -> PathBuf {
    book_dir().join("src")
}

/// The directory where the tests build: `<repo>/target/book`.
pub fn book_target() -> PathBuf {
    repo_root().join("target").join("book")
}

/// A chapter: its path relative to `book/src` and its text.
pub struct Chapter {
    pub path: PathBuf,
    pub text: String,
}

impl Chapter {
    /// The chapter's file on disk.
    pub fn file(&self) -> PathBuf {
        src_dir().join(&self.path)
    }

    /// The directory that relative links and includes of the chapter start from.
    pub fn dir(&self) -> PathBuf {
        self.file()
            .parent()
            .expect("a chapter has a parent")
            .to_path_buf()
    }
}

/// The chapters of `SUMMARY.md`, in its order.
pub fn chapters() -> Vec<Chapter> {
    summary_paths()
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(src_dir().join(&path))
                .unwrap_or_else(|e| panic!("SUMMARY.md lists {}: {e}", path.display()));
            Chapter { path, text }
        })
        .collect()
}

/// The files that `SUMMARY.md` links, in order.
pub fn summary_paths() -> Vec<PathBuf> {
    let summary = std::fs::read_to_string(src_dir().join("SUMMARY.md")).expect("SUMMARY.md");
    links(&summary)
        .into_iter()
        .map(|link| PathBuf::from(link.target))
        .collect()
}

/// Every `.md` file under `book/src`, relative to it, except `SUMMARY.md`.
pub fn markdown_files() -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(&src_dir(), &mut found);
    let mut files: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(src_dir()).expect("under src").to_path_buf())
        .filter(|p| p != Path::new("SUMMARY.md"))
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// A fenced code block.
pub struct Fence {
    /// The info string: `sh`, `console`, `rust`, ...
    pub info: String,
    /// The lines between the fences.
    pub body: String,
    /// The line of the opening fence, from 1.
    pub line: usize,
}

/// The fenced code blocks of `text`.
pub fn fences(text: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None if trimmed.starts_with("```") => {
                open = Some(Fence {
                    info: trimmed.trim_start_matches('`').trim().to_string(),
                    body: String::new(),
                    line: i + 1,
                });
            }
            None => {}
            Some(_) if trimmed.starts_with("```") => out.push(open.take().expect("open")),
            Some(fence) => {
                fence.body.push_str(line);
                fence.body.push('\n');
            }
        }
    }
    assert!(open.is_none(), "a fence is not closed");
    out
}

/// The lines of `text` outside fenced code blocks, with their numbers (from 1).
pub fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut inside = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            out.push((i + 1, line));
        }
    }
    out
}

/// A link or an image of a chapter.
#[derive(Debug)]
pub struct Link {
    pub target: String,
    pub line: usize,
}

/// The Markdown links and images of `text` outside code (`[x](target)`, `![x](target)`) and
/// the `src`/`href` attributes of its HTML.
pub fn links(text: &str) -> Vec<Link> {
    let mut out = Vec::new();
    for (line_number, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push(Link {
                target: target.to_string(),
                line: line_number,
            });
            rest = &after[end..];
        }
        for attribute in ["src=\"", "href=\""] {
            let mut rest = line.as_str();
            while let Some(at) = rest.find(attribute) {
                let after = &rest[at + attribute.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.push(Link {
                    target: after[..end].to_string(),
                    line: line_number,
                });
                rest = &after[end..];
            }
        }
    }
    out
}

/// `line` with its inline code spans blanked, so that code is not read as links.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in line.chars() {
        if c == '`' {
            inside = !inside;
            out.push(' ');
        } else if inside {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The anchors of the headings of `text`, as mdBook makes them, and of its `<a id>` elements.
pub fn heading_anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    for (_, line) in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        // A heading with an attribute `{#id}` has that anchor, as mdBook gives it.
        if let Some(id) = heading_id(title) {
            anchors.push(id.to_string());
            continue;
        }
        let base = slug(title.trim());
        // mdBook numbers repeated headings: `x`, `x-1`, `x-2`.
        let mut anchor = base.clone();
        let mut n = 1;
        while anchors.contains(&anchor) {
            anchor = format!("{base}-{n}");
            n += 1;
        }
        anchors.push(anchor);
    }
    // Rows of a table get anchors of their own as inline HTML: `<a id="x"></a>`.
    for (_, line) in prose_lines(text) {
        for (at, _) in line.match_indices("<a id=\"") {
            let rest = &line[at + "<a id=\"".len()..];
            if let Some((id, _)) = rest.split_once('"') {
                anchors.push(id.to_string());
            }
        }
    }
    anchors
}

/// The `id` of a heading that ends with the attribute `{#id}`.
pub fn heading_id(title: &str) -> Option<&str> {
    let (_, attribute) = title.trim_end().rsplit_once(" {#")?;
    attribute.strip_suffix('}')
}

/// mdBook's anchor of a heading: the text without Markdown, in lower case, letters, digits, `_`
/// and `-` kept, spaces turned into `-`, everything else dropped.
pub fn slug(title: &str) -> String {
    let text: String = title.chars().filter(|c| *c != '`' && *c != '*').collect();
    // A link in a heading keeps only its text.
    let text = text.replace("](", "\u{0}");
    let text: String = text
        .split('\u{0}')
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part.to_string()
            } else {
                part.split_once(')')
                    .map_or(String::new(), |(_, r)| r.to_string())
            }
        })
        .collect();
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".to_string())
            } else {
                None
            }
        })
        .collect()
}

/// An `{{#include}}` (or `{{#rustdoc_include}}`) directive of a chapter.
#[derive(Debug)]
pub struct Include {
    /// The path, relative to the chapter.
    pub path: String,
    /// What follows the path: empty, an anchor name, or a line range `a:b`, `a:`, `:b`, `a`.
    pub selector: String,
    pub line: usize,
}

/// The include directives of `text`, wherever they are (mdBook expands them in code blocks too).
pub fn includes(text: &str) -> Vec<Include> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("{{#") {
            let after = &rest[at + 3..];
            let end = after.find("}}").unwrap_or(after.len());
            let directive = after[..end].trim();
            rest = &after[end..];
            let Some(argument) = directive
                .strip_prefix("include ")
                .or_else(|| directive.strip_prefix("rustdoc_include "))
            else {
                continue;
            };
            let argument = argument.trim();
            let (path, selector) = argument.split_once(':').unwrap_or((argument, ""));
            out.push(Include {
                path: path.to_string(),
                selector: selector.to_string(),
                line: i + 1,
            });
        }
    }
    out
}
