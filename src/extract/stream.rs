//! Streaming server rendering (React's `renderToPipeableStream`, used by
//! Next.js, Remix and others): the page's shell arrives first with
//! placeholders, and each part that was still loading follows later in the
//! same response as a hidden chunk, `<div hidden id="S:1">…</div>`, with a
//! script call that moves it into place:
//!
//! * `$RC("B:0","S:1")` completes a suspense boundary: the fallback between
//!   `<template id="B:0">` and the boundary's closing `<!--/$-->` comment
//!   (a spinner, a skeleton) gives way to the chunk's content;
//! * `$RR("B:0","S:1",[["/style.css","high"]])` does the same once the
//!   stylesheets it names are loaded (React 19's reveal of a boundary that
//!   brings styles with it; its first two arguments are `$RC`'s);
//! * `$RS("S:2","P:3")` puts a segment where `<template id="P:3">` stands.
//!
//! [`splice`] does on the text what those scripts do in a browser, before the
//! pre-pass drops scripts and templates, so the article sits where a reader
//! sees it. Chunks no call moves stay hidden (and are pruned as such). A
//! page without such a call is returned as it is, without a copy.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// `$RC("B:0","S:0")`, `$RR("B:0","S:0",[…])`, `$RS("S:1","P:1")`: the calls, with string arguments
/// (a definition `$RC=function(…)` has none).
static CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\$R([CRS])\(\s*["']([A-Za-z]{1,2}:[0-9A-Za-z]{1,8})["']\s*,\s*["']([A-Za-z]{1,2}:[0-9A-Za-z]{1,8})["']"#)
        .expect("static regex")
});
/// A placeholder template, `<template id="B:0"></template>`.
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)<template\s+id\s*=\s*["']?([A-Za-z]{1,2}:[0-9A-Za-z]{1,8})["']?\s*/?>\s*(?:</template\s*>)?"#)
        .expect("static regex")
});

/// Most chunks moved into one page.
const MAX_CHUNKS: usize = 4096;
/// How deep chunks may sit inside other chunks.
const MAX_NESTING: usize = 32;

/// The page with its streamed chunks moved into place, and the ids of the
/// chunks moved (`S:1 -> B:0`), in page order.
pub fn splice(html: &str) -> (Cow<'_, str>, Vec<String>) {
    let none = || (Cow::Borrowed(html), Vec::new());
    let bytes = html.as_bytes();
    // One pass for the three calls (`$RC(`, `$RR(`, `$RS(`), not one each.
    let called = memchr::memmem::find_iter(bytes, b"$R")
        .any(|at| matches!(bytes.get(at + 2..at + 4), Some(b"C(" | b"R(" | b"S(")));
    if !called {
        return none();
    }
    // Target placeholder -> chunk id.
    let mut moves: HashMap<&str, &str> = HashMap::new();
    for c in CALL.captures_iter(html).take(MAX_CHUNKS) {
        let (a, b) = (
            c.get(2).map_or("", |m| m.as_str()),
            c.get(3).map_or("", |m| m.as_str()),
        );
        match &c[1] {
            "S" => moves.insert(b, a),
            _ => moves.insert(a, b),
        };
    }
    // Each chunk's content, and the ranges of the chunks to take out.
    let mut content: HashMap<&str, &str> = HashMap::new();
    let mut cut: Vec<(usize, usize)> = Vec::new();
    for &chunk in moves.values() {
        if let Some((start, inner, end)) = hidden_element(html, chunk) {
            content.insert(chunk, &html[inner.0..inner.1]);
            cut.push((start, end));
        }
    }
    if content.is_empty() {
        return none();
    }
    cut.sort_unstable();
    let mut shell = String::with_capacity(html.len());
    let mut at = 0;
    for (s, e) in cut {
        if s < at {
            continue; // inside a chunk already taken out
        }
        shell.push_str(&html[at..s]);
        at = e;
    }
    shell.push_str(&html[at..]);
    let mut moved = Vec::new();
    let mut used = std::collections::HashSet::new();
    let out = fill(&shell, &moves, &content, &mut used, &mut moved, 0);
    if moved.is_empty() {
        return none();
    }
    (Cow::Owned(out), moved)
}

/// `text` with every placeholder that a call fills replaced by its chunk,
/// itself filled in turn.
fn fill<'a>(
    text: &str,
    moves: &HashMap<&'a str, &'a str>,
    content: &HashMap<&'a str, &'a str>,
    used: &mut std::collections::HashSet<&'a str>,
    moved: &mut Vec<String>,
    depth: usize,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for c in PLACEHOLDER.captures_iter(text) {
        let (Some(whole), Some(id)) = (c.get(0), c.get(1)) else {
            continue;
        };
        if whole.start() < at {
            continue;
        }
        let Some((&target, &chunk)) = moves.get_key_value(id.as_str()) else {
            continue;
        };
        let Some(&inner) = content.get(chunk) else {
            continue;
        };
        if depth >= MAX_NESTING || !used.insert(chunk) {
            continue;
        }
        out.push_str(&text[at..whole.start()]);
        // A boundary's fallback runs to its closing comment.
        at = if target.starts_with('B') {
            boundary_end(text, whole.end()).unwrap_or(whole.end())
        } else {
            whole.end()
        };
        moved.push(format!("{chunk} -> {target}"));
        out.push_str(&fill(inner, moves, content, used, moved, depth + 1));
    }
    out.push_str(&text[at.min(text.len())..]);
    out
}

/// Start of the `<!--/$-->` that closes the boundary opened before `from`,
/// skipping boundaries nested in its fallback.
fn boundary_end(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = from;
    while let Some(off) = memchr::memmem::find(&bytes[at..], b"<!--") {
        let c = at + off;
        let rest = &bytes[c + 4..];
        if rest.starts_with(b"/$-->") {
            if depth == 0 {
                return Some(c);
            }
            depth -= 1;
        } else if rest.starts_with(b"$") {
            depth += 1;
        }
        at = c + 4;
    }
    None
}

/// The element with `id="<chunk>"` and a `hidden` attribute: (start of its
/// start tag, its content's range, end of its end tag).
fn hidden_element(html: &str, chunk: &str) -> Option<(usize, (usize, usize), usize)> {
    let bytes = html.as_bytes();
    for quote in ["\"", "'"] {
        let needle = format!("id={quote}{chunk}{quote}");
        let mut from = 0;
        while let Some(off) = memchr::memmem::find(&bytes[from..], needle.as_bytes()) {
            let at = from + off;
            from = at + needle.len();
            let Some(lt) = memchr::memrchr(b'<', &bytes[..at]) else {
                continue;
            };
            let Some(gt) = memchr::memchr(b'>', &bytes[at..]).map(|g| at + g) else {
                continue;
            };
            let tag = &html[lt + 1..gt];
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            if name.is_empty() || name == "template" || !tag.to_ascii_lowercase().contains("hidden")
            {
                continue;
            }
            let (close, end) = matching_close(html, gt + 1, &name)?;
            return Some((lt, (gt + 1, close), end));
        }
    }
    None
}

/// The `</name>` that closes an element of that name whose content starts at
/// `from`: (its start, its end).
fn matching_close(html: &str, from: usize, name: &str) -> Option<(usize, usize)> {
    let bytes = html.as_bytes();
    let mut depth = 0usize;
    let mut at = from;
    while let Some(off) = memchr::memchr(b'<', &bytes[at..]) {
        let lt = at + off;
        let closing = bytes.get(lt + 1) == Some(&b'/');
        let start = if closing { lt + 2 } else { lt + 1 };
        let after = bytes.get(start + name.len()).copied().unwrap_or(b'>');
        let same = bytes
            .get(start..start + name.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            && matches!(after, b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/');
        at = lt + 1;
        if !same {
            continue;
        }
        if closing {
            if depth == 0 {
                let end = memchr::memchr(b'>', &bytes[lt..]).map_or(bytes.len(), |g| lt + g + 1);
                return Some((lt, end));
            }
            depth -= 1;
        } else {
            depth += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_take_the_place_of_fallbacks_and_placeholders() {
        let html = concat!(
            "<body><h1>T</h1><!--$?--><template id=\"B:0\"></template><p>Loading…</p><!--/$-->",
            "<footer>f</footer>",
            "<div hidden id=\"S:0\"><article><p>First part.</p><template id=\"P:1\"></template></article></div>",
            "<script>$RC=function(b,c){};$RC(\"B:0\",\"S:0\")</script>",
            "<div hidden id=\"S:1\"><p>Second <div>nested</div> part.</p></div>",
            "<script>$RS(\"S:1\",\"P:1\")</script></body>"
        );
        let (out, moved) = splice(html);
        assert_eq!(moved, ["S:0 -> B:0", "S:1 -> P:1"]);
        assert!(!out.contains("Loading"), "{out}");
        assert!(!out.contains("hidden"), "{out}");
        let first = out.find("First part.").unwrap();
        let second = out.find("Second <div>nested</div> part.").unwrap();
        let footer = out.find("<footer>").unwrap();
        assert!(first < second && second < footer, "{out}");
    }

    #[test]
    fn a_boundary_revealed_with_its_styles_is_filled_too() {
        let html = concat!(
            "<main><!--$?--><template id=\"B:0\"></template><p>Loading…</p><!--/$--></main>",
            "<div hidden id=\"S:0\"><p>The story.</p></div>",
            "<script>$RR(\"B:0\",\"S:0\",[[\"/a.css\",\"high\"]])</script>"
        );
        let (out, moved) = splice(html);
        assert_eq!(moved, ["S:0 -> B:0"]);
        assert!(
            out.contains("<p>The story.</p>") && !out.contains("Loading"),
            "{out}"
        );
        assert!(out.find("The story.") < out.find("</main>"), "{out}");
    }

    #[test]
    fn pages_without_calls_are_not_copied() {
        let html = "<div hidden id=\"S:0\"><p>x</p></div><template id=\"B:0\"></template>";
        let (out, moved) = splice(html);
        assert!(matches!(out, Cow::Borrowed(_)));
        assert!(moved.is_empty());
        // A call whose chunk is missing changes nothing either.
        let (out, moved) = splice("<p>a</p><script>$RC(\"B:9\",\"S:9\")</script>");
        assert!(matches!(out, Cow::Borrowed(_)) && moved.is_empty());
    }

    #[test]
    fn a_chunk_that_names_itself_does_not_loop() {
        let html = "<template id=\"P:0\"></template><div hidden id=\"S:0\"><template id=\"P:0\"></template>x</div><script>$RS(\"S:0\",\"P:0\")</script>";
        let (out, moved) = splice(html);
        assert_eq!(moved.len(), 1);
        assert!(out.contains('x'));
    }
}
