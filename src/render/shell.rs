//! Does a page's markup look like an application shell, an HTML page whose
//! story only scripts will write? Pure; one pass over the bytes.
//!
//! Asked only when the static read found no article. A shell carries little
//! text of its own (under [`MAX_SHELL_TEXT`] characters came out of the
//! extractor) and at least one of: an empty mount point (`<div id="root">`,
//! `app`, `__next`, `__nuxt`, `___gatsby`, `svelte`, `main`, `content`,
//! `story`, `article` with nothing inside), script bytes several times its
//! text (inline code or a JSON payload), or a `<noscript>` asking for
//! JavaScript.

use memchr::memmem;

/// Most text characters the static read may have found in a shell.
pub(crate) const MAX_SHELL_TEXT: usize = 1500;

/// Ids and classes of elements scripts typically mount a page into.
const MOUNTS: &[&str] = &[
    "root",
    "app",
    "__next",
    "__nuxt",
    "___gatsby",
    "svelte",
    "main",
    "content",
    "story",
    "article",
    "page",
];

/// Why the markup looks like an application shell, or `None`.
pub(crate) fn shell_reason(html: &[u8], text_chars: usize) -> Option<&'static str> {
    if text_chars >= MAX_SHELL_TEXT {
        return None;
    }
    let lower = html.to_ascii_lowercase();
    if empty_mount(&lower) {
        return Some("an empty mount point for scripts");
    }
    let scripts = script_bytes(&lower);
    if scripts >= 1024 && scripts >= 4 * text_chars.max(64) {
        return Some("script bytes far above its text");
    }
    if let Some(i) = memmem::find(&lower, b"<noscript") {
        let tail = &lower[i..lower.len().min(i + 400)];
        if memmem::find(tail, b"javascript").is_some() {
            return Some("a <noscript> asking for JavaScript");
        }
    }
    None
}

/// An element with a mount id or class, empty but for whitespace and comments.
fn empty_mount(lower: &[u8]) -> bool {
    for name in MOUNTS {
        for attr in ["id=\"", "id='", "id="] {
            let needle = format!("{attr}{name}");
            let mut from = 0;
            while let Some(i) = memmem::find(&lower[from..], needle.as_bytes()) {
                let at = from + i + needle.len();
                from = at;
                // The attribute value must end right after the name.
                if !matches!(lower.get(at), Some(b'"' | b'\'' | b' ' | b'>')) {
                    continue;
                }
                let Some(close) = memchr::memchr(b'>', &lower[at..]) else {
                    break;
                };
                if is_empty_content(&lower[at + close + 1..]) {
                    return true;
                }
            }
        }
    }
    false
}

/// Whitespace, comments and nothing else up to the next closing tag.
fn is_empty_content(rest: &[u8]) -> bool {
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b' ' | b'\n' | b'\r' | b'\t' => i += 1,
            b'<' if rest[i..].starts_with(b"<!--") => match memmem::find(&rest[i..], b"-->") {
                Some(end) => i += end + 3,
                None => return false,
            },
            b'<' => return rest[i..].starts_with(b"</"),
            _ => return false,
        }
    }
    false
}

/// Bytes between `<script...>` and `</script>`, all scripts together but
/// JSON-LD (metadata for search engines, not what draws the page).
fn script_bytes(lower: &[u8]) -> usize {
    let mut total = 0;
    let mut from = 0;
    while let Some(i) = memmem::find(&lower[from..], b"<script") {
        let open = from + i;
        let Some(gt) = memchr::memchr(b'>', &lower[open..]) else {
            break;
        };
        let start = open + gt + 1;
        let end = memmem::find(&lower[start..], b"</script").map_or(lower.len(), |e| start + e);
        if memmem::find(&lower[open..start], b"ld+json").is_none() {
            total += end - start;
        }
        from = end;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_are_told_from_thin_static_pages() {
        let react = br#"<html><head><title>T</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>"#;
        assert!(shell_reason(react, 0).is_some());
        let next = br#"<body><div id='__next'>  <!-- hydrated --> </div></body>"#;
        assert!(shell_reason(next, 10).is_some());
        let json = format!(
            "<body><h1>Headline</h1><div class=story></div><script type=application/json>{}</script></body>",
            "{\"p\":\"x\"}".repeat(300)
        );
        assert!(shell_reason(json.as_bytes(), 20).is_some());
        let noscript =
            b"<body><noscript>Please enable JavaScript to read this story.</noscript></body>";
        assert!(shell_reason(noscript, 0).is_some());
        // A filled mount point, a small script, a thin page: not shells.
        let filled =
            br#"<body><div id="root"><p>Hello there, reader.</p></div><script>x=1</script></body>"#;
        assert_eq!(shell_reason(filled, 20), None);
        let thin = b"<body><h1>Contact</h1><p>Write to us.</p></body>";
        assert_eq!(shell_reason(thin, 20), None);
        // JSON-LD is not a script that draws the page.
        let ld = format!(
            "<body><h1>Tags</h1><script type=\"application/ld+json\">{}</script></body>",
            "{\"@type\":\"ItemList\"}".repeat(300)
        );
        assert_eq!(shell_reason(ld.as_bytes(), 20), None);
        // `id="rooted"` is not a mount point.
        let other = br#"<body><div id="rooted"></div></body>"#;
        assert_eq!(shell_reason(other, 0), None);
        // Enough text of its own: never a shell.
        assert_eq!(shell_reason(react, MAX_SHELL_TEXT), None);
    }
}
