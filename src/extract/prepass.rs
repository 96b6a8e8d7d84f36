//! A cheap lexical pass over the decoded page before html5ever sees it.
//!
//! It does four things in one linear scan:
//! * drops `<script>`, `<style>`, `<noscript>`, `<iframe>`, `<svg>`,
//!   `<template>` elements and comments, which never hold article text (so the
//!   tree builder has less to do), keeping the bodies of JSON-LD scripts and
//!   long `<noscript>` markup (read when the page has no text of its own)
//!   aside;
//! * leaves out the attributes nobody reads ([`READ_ATTRS`]: `srcset`,
//!   `data-*`, event handlers... are a sixth of a page's markup, and the
//!   tree builder is slow on them);
//! * caps element nesting at [`MAX_DEPTH`]: tags deeper than that are removed
//!   (their text stays, in the deepest kept ancestor). html5ever's cost grows
//!   with the square of the depth, so 100,000 nested `<div>`s would otherwise
//!   take minutes;
//! * truncates pages larger than [`MAX_BYTES`].
//!
//! The depth estimate is lexical (a stack of open tag names, with the usual
//! implied end tags of `p`, `li`, `td`...), which is all a guard needs.

/// Deepest element nesting handed to the tree builder.
pub const MAX_DEPTH: usize = 256;
/// Largest page (in bytes of decoded text) that is parsed; the rest is ignored.
pub const MAX_BYTES: usize = 8 << 20;
/// How far down the open-tag stack an end tag looks for its start tag.
const MATCH_WINDOW: usize = 64;

/// The page ready for the tree builder, and what was taken out of it.
#[derive(Debug, Default)]
pub struct Prepared {
    pub html: String,
    /// Bodies of `<script type="application/ld+json">` elements.
    pub jsonld: Vec<String>,
    /// Whether the depth cap removed any tag.
    pub capped: bool,
    /// Hydration payload scripts (see [`super::payload`]).
    pub payloads: Vec<(super::payload::Kind, String)>,
    /// Markup of `<noscript>` elements long enough to hold text (what a
    /// page an application draws writes for readers without scripts).
    pub noscript: Vec<String>,
}

/// Least bytes of a `<noscript>`'s markup kept aside ([`Prepared::noscript`]):
/// a tracking pixel or an "enable JavaScript" line is shorter.
const NOSCRIPT_BYTES: usize = 400;

/// What the pass does with a tag, by its (lower-cased) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagKind {
    /// A void element: no end tag, no depth.
    Void,
    /// Dropped with its content.
    Dropped,
    /// Content is raw text, but the element is kept.
    RawKept,
    /// A start tag that closes an open element of the same name.
    Sibling,
    Other,
}

/// [`TagKind`] of `name`: one `match` (a jump on the length, then a
/// comparison or two) rather than a list's `contains` comparing every
/// entry, for every tag of a page.
fn tag_kind(name: &str) -> TagKind {
    match name {
        "area" | "base" | "br" | "col" | "embed" | "hr" | "img" | "input" | "link" | "meta"
        | "source" | "track" | "wbr" | "param" | "keygen" | "basefont" | "bgsound" | "frame" => {
            TagKind::Void
        }
        "script" | "style" | "noscript" | "iframe" | "svg" | "template" | "noembed"
        | "noframes" => TagKind::Dropped,
        "title" | "textarea" | "xmp" => TagKind::RawKept,
        "p" | "li" | "dt" | "dd" | "option" | "tr" | "td" | "th" => TagKind::Sibling,
        _ => TagKind::Other,
    }
}

/// An open element: its lower-cased name at `names[start..end]` (the names
/// of the open elements, one after another: the stack's own string, so a
/// tag costs no allocation).
struct Open {
    start: usize,
    end: usize,
    dropped: bool,
}

/// Run the pass.
pub fn prepare(text: &str) -> Prepared {
    prepare_level(text, true)
}

/// The pass; `markup` says whether template scripts' markup is handed on
/// (not within such markup: it is handed on once, its scripts dropped).
fn prepare_level(text: &str, markup: bool) -> Prepared {
    let text = truncate(text, MAX_BYTES);
    let bytes = text.as_bytes();
    let mut out = Prepared {
        html: String::with_capacity(text.len()),
        ..Prepared::default()
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut names = String::new();
    let mut name = String::new();
    let mut i = 0;
    let mut copied = 0; // bytes[copied..i] are pending copy
    while let Some(off) = memchr::memchr(b'<', &bytes[i..]) {
        let lt = i + off;
        let next = bytes.get(lt + 1).copied().unwrap_or(b' ');
        if next == b'!' {
            // Comment, doctype or CDATA: drop comments, keep the rest.
            if bytes[lt..].starts_with(b"<!--") {
                let end = memchr::memmem::find(&bytes[lt + 4..], b"-->")
                    .map_or(bytes.len(), |e| lt + 4 + e + 3);
                out.html.push_str(&text[copied..lt]);
                copied = end;
                i = end;
            } else {
                i = tag_end(bytes, lt + 2);
            }
            continue;
        }
        let is_end = next == b'/';
        let name_start = if is_end { lt + 2 } else { lt + 1 };
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            i = lt + 1;
            continue;
        }
        let mut name_end = name_start;
        while name_end < bytes.len()
            && !matches!(
                bytes[name_end],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
            )
        {
            name_end += 1;
        }
        name.clear();
        name.push_str(&text[name_start..name_end]);
        name.make_ascii_lowercase();
        let end = tag_end(bytes, name_end);
        if is_end {
            let found = stack
                .iter()
                .rev()
                .take(MATCH_WINDOW)
                .position(|o| names[o.start..o.end] == *name)
                .map(|p| stack.len() - 1 - p);
            if let Some(k) = found {
                let dropped = stack[k].dropped;
                names.truncate(stack[k].start);
                stack.truncate(k);
                if dropped {
                    out.html.push_str(&text[copied..lt]);
                    copied = end;
                }
            }
            i = end;
            continue;
        }
        let kind = tag_kind(&name);
        if matches!(kind, TagKind::Dropped | TagKind::RawKept) {
            let close = find_close(bytes, end, &name);
            let after = tag_end(bytes, close);
            if kind == TagKind::Dropped {
                out.html.push_str(&text[copied..lt]);
                copied = after;
                if name == "noscript" && markup && close - end >= NOSCRIPT_BYTES {
                    out.noscript.push(text[end..close].to_string());
                }
                if name == "script" {
                    match script_kind(&text[lt..end]) {
                        Script::JsonLd => out.jsonld.push(text[end..close].to_string()),
                        // Markup kept in a template script is page content that
                        // a browser renders: hand it to the parser.
                        Script::Markup if markup => push_markup(&mut out, &text[end..close]),
                        Script::Markup => {}
                        Script::Code => {
                            let body = &text[end..close];
                            if let Some(k) = super::payload::kind(&text[lt..end], body) {
                                out.payloads.push((k, body.to_string()));
                            }
                        }
                    }
                }
            }
            i = after;
            continue;
        }
        if end - name_end > 1 {
            let before = out.html.len();
            out.html.push_str(&text[copied..lt]);
            if strip_attrs(&text[lt..end], name_end - lt, &mut out.html) {
                copied = end;
            } else {
                out.html.truncate(before);
            }
        }
        if kind == TagKind::Void {
            i = end;
            continue;
        }
        if kind == TagKind::Sibling
            && stack.last().is_some_and(|o| names[o.start..o.end] == *name)
            && let Some(o) = stack.pop()
        {
            names.truncate(o.start);
        }
        let dropped = stack.len() >= MAX_DEPTH;
        if dropped {
            out.capped = true;
            out.html.push_str(&text[copied..lt]);
            copied = end;
        }
        let start = names.len();
        names.push_str(&name);
        stack.push(Open {
            start,
            end: names.len(),
            dropped,
        });
        i = end;
    }
    out.html.push_str(&text[copied.min(text.len())..]);
    out
}

/// The attributes the extractor reads (through [`super::dom::Dom::attr`],
/// which holds to this list in debug builds), and those the tree builder
/// needs (`type` of an `input` in a table, `encoding` of MathML's
/// `annotation-xml`, a `font`'s `color`, `face` and `size` in foreign
/// content). Any attribute whose name holds `paywall` is kept too.
pub(crate) const READ_ATTRS: &[&str] = &[
    "aria-hidden",
    "aria-label",
    "charset",
    "class",
    "color",
    "content",
    "data-lang",
    "data-language",
    "datetime",
    "encoding",
    "face",
    "hidden",
    "href",
    "http-equiv",
    "id",
    "itemprop",
    "lang",
    "name",
    "property",
    "pubdate",
    "rel",
    "role",
    "size",
    "start",
    "style",
    "title",
    "type",
    "xml:lang",
];

/// Is an attribute (its name as written) one the extractor or the tree
/// builder reads ([`READ_ATTRS`])?
fn read_attr(name: &[u8]) -> bool {
    let mut b = [0u8; 16];
    if name.len() <= b.len() {
        for (d, c) in b.iter_mut().zip(name) {
            *d = c.to_ascii_lowercase();
        }
        let known = matches!(
            &b[..name.len()],
            b"aria-hidden"
                | b"aria-label"
                | b"charset"
                | b"class"
                | b"color"
                | b"content"
                | b"data-lang"
                | b"data-language"
                | b"datetime"
                | b"encoding"
                | b"face"
                | b"hidden"
                | b"href"
                | b"http-equiv"
                | b"id"
                | b"itemprop"
                | b"lang"
                | b"name"
                | b"property"
                | b"pubdate"
                | b"rel"
                | b"role"
                | b"size"
                | b"start"
                | b"style"
                | b"title"
                | b"type"
                | b"xml:lang"
        );
        if known {
            return true;
        }
    }
    name.windows(7).any(|w| w.eq_ignore_ascii_case(b"paywall"))
}

/// Each attribute of a start tag (`b`, from its `<` to its `>`; its name
/// `name_len` bytes with the `<`) as (start, end of name, end); `false`
/// when the tag cannot be read as attributes (a quote left open).
fn each_attr(b: &[u8], name_len: usize, mut f: impl FnMut(usize, usize, usize)) -> bool {
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    let mut j = name_len;
    loop {
        while j < b.len() && (ws(b[j]) || b[j] == b'/') {
            j += 1;
        }
        if j >= b.len() || b[j] == b'>' {
            return true;
        }
        let start = j;
        j += 1; // a name may open with `=`
        while j < b.len() && !ws(b[j]) && !matches!(b[j], b'/' | b'>' | b'=') {
            j += 1;
        }
        let name_end = j;
        let mut k = j;
        while k < b.len() && ws(b[k]) {
            k += 1;
        }
        if k < b.len() && b[k] == b'=' {
            k += 1;
            while k < b.len() && ws(b[k]) {
                k += 1;
            }
            match b.get(k) {
                Some(&q @ (b'"' | b'\'')) => match memchr::memchr(q, &b[k + 1..]) {
                    Some(close) => k += close + 2,
                    None => return false,
                },
                _ => {
                    while k < b.len() && !ws(b[k]) && b[k] != b'>' {
                        k += 1;
                    }
                }
            }
            j = k;
        }
        f(start, name_end, j);
    }
}

/// Write `tag` (a start tag, its name `name_len` bytes with the `<`) to
/// `out` without the attributes nobody reads ([`read_attr`]) and say so,
/// or write nothing and return `false` when it has none such (or cannot
/// be read as attributes). They are most of many a page's markup
/// (`srcset`, `data-*`, event handlers), and the tree builder is slower on
/// them than this pass.
fn strip_attrs(tag: &str, name_len: usize, out: &mut String) -> bool {
    let b = tag.as_bytes();
    let mut dropped = false;
    let ok = each_attr(b, name_len, |s, n, _| dropped |= !read_attr(&b[s..n]));
    if !ok || !dropped || !tag.ends_with('>') {
        return false;
    }
    out.push_str(&tag[..name_len]);
    let mut last = name_len;
    each_attr(b, name_len, |s, n, e| {
        if read_attr(&b[s..n]) {
            out.push(' ');
            out.push_str(&tag[s..e]);
            last = e;
        }
    });
    // A self-closing slash, unless an unquoted value took it in.
    if tag.ends_with("/>") && last < tag.len() - 1 {
        out.push('/');
    }
    out.push('>');
    true
}

/// A template script's content, when it is markup (not JSON data a script
/// reads), through the pass itself: a script or style it opens without
/// closing would otherwise swallow the rest of the page.
fn push_markup(out: &mut Prepared, content: &str) {
    let t = content.trim_start();
    let t = t.strip_prefix("<![CDATA[").unwrap_or(t).trim_start();
    if !t.starts_with('<') {
        return;
    }
    let inner = prepare_level(content, false);
    out.html.push_str(&inner.html);
    out.capped |= inner.capped;
}

/// Cut `text` at a char boundary at or below `max` bytes.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Index just past the `>` that ends the tag whose attributes start at `from`,
/// skipping quoted attribute values.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut j = from;
    let mut after_eq = false;
    while j < bytes.len() {
        match bytes[j] {
            b'>' => return j + 1,
            b'=' => after_eq = true,
            q @ (b'"' | b'\'') if after_eq => {
                match memchr::memchr(q, &bytes[j + 1..]) {
                    Some(e) => j += e + 1,
                    None => return bytes.len(),
                }
                after_eq = false;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => after_eq = false,
        }
        j += 1;
    }
    bytes.len()
}

/// Start of the `</name` that closes a raw-text element, or the end of input.
fn find_close(bytes: &[u8], from: usize, name: &str) -> usize {
    let mut j = from;
    while let Some(off) = memchr::memmem::find(&bytes[j..], b"</") {
        let at = j + off;
        let cand = bytes.get(at + 2..at + 2 + name.len());
        let after = bytes.get(at + 2 + name.len()).copied().unwrap_or(b'>');
        if cand.is_some_and(|c| c.eq_ignore_ascii_case(name.as_bytes()))
            && matches!(after, b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')
        {
            return at;
        }
        j = at + 2;
    }
    bytes.len()
}

enum Script {
    JsonLd,
    Markup,
    Code,
}

fn script_kind(start_tag: &str) -> Script {
    let tag = start_tag.to_ascii_lowercase();
    if tag.contains("ld+json") {
        Script::JsonLd
    } else if tag.contains("text/template") || tag.contains("text/html") {
        Script::Markup
    } else {
        Script::Code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_scripts_and_comments_and_keeps_jsonld() {
        let p = prepare(
            "<p>a<!-- c --><script>if (a<b) x='</p>'</script>b</p>\
             <script type=\"application/ld+json\">{\"x\":1}</script><style>p{}</style><p>c</p>",
        );
        assert_eq!(p.html, "<p>ab</p><p>c</p>");
        assert_eq!(p.jsonld, vec!["{\"x\":1}".to_string()]);
    }

    #[test]
    fn attributes_nobody_reads_are_left_out() {
        let p = prepare(
            "<div class=\"a\" data-x='1 > 2' onclick=go() ID=b><img srcset=\"x 1x\" alt=\"\" data-paywall=1/><p>t</p></div>",
        );
        assert_eq!(
            p.html,
            "<div class=\"a\" ID=b><img data-paywall=1/><p>t</p></div>"
        );
        assert_eq!(
            prepare("<math><mi mathvariant=x/></math>").html,
            "<math><mi/></math>"
        );
        let plain = "<p class=x id=\"y\">t</p><br/>";
        assert_eq!(prepare(plain).html, plain);
    }

    #[test]
    fn the_attributes_kept_are_those_read() {
        for a in READ_ATTRS {
            assert!(
                read_attr(a.as_bytes()) && read_attr(a.to_uppercase().as_bytes()),
                "{a}"
            );
        }
        for a in [
            "src", "srcset", "data-x", "onclick", "alt", "width", "classes", "ids",
        ] {
            assert!(!read_attr(a.as_bytes()), "{a}");
        }
        assert!(read_attr(b"data-paywall-part"));
    }

    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param", "keygen", "basefont", "bgsound", "frame",
    ];
    /// Elements dropped with their content.
    const DROPPED: &[&str] = &[
        "script", "style", "noscript", "iframe", "svg", "template", "noembed", "noframes",
    ];
    /// Elements whose content is raw text but which are kept.
    const RAW_KEPT: &[&str] = &["title", "textarea", "xmp"];
    /// Start tags that close an open element of the same name.
    const SELF_CLOSING_SIBLINGS: &[&str] = &["p", "li", "dt", "dd", "option", "tr", "td", "th"];

    #[test]
    fn tag_kinds_are_the_lists() {
        for (list, kind) in [
            (VOID, TagKind::Void),
            (DROPPED, TagKind::Dropped),
            (RAW_KEPT, TagKind::RawKept),
            (SELF_CLOSING_SIBLINGS, TagKind::Sibling),
        ] {
            for name in list {
                assert_eq!(tag_kind(name), kind, "{name}");
            }
        }
        let listed = VOID.len() + DROPPED.len() + RAW_KEPT.len() + SELF_CLOSING_SIBLINGS.len();
        let named = ["div", "span", "a", "section", "pre", "math", "body"];
        assert_eq!(listed, 37);
        for name in named {
            assert_eq!(tag_kind(name), TagKind::Other, "{name}");
        }
    }

    #[test]
    fn keeps_title_and_quoted_angle_brackets() {
        let src = "<title>a < b</title><a title=\"x>y\" href='/z'>link</a>";
        assert_eq!(prepare(src).html, src);
    }

    #[test]
    fn caps_depth_and_keeps_text() {
        let n = 1000;
        let src = format!("{}deep{}", "<div>".repeat(n), "</div>".repeat(n));
        let p = prepare(&src);
        assert!(p.capped);
        assert_eq!(p.html.matches("<div>").count(), MAX_DEPTH);
        assert_eq!(p.html.matches("</div>").count(), MAX_DEPTH);
        assert!(p.html.contains("deep"));
    }

    #[test]
    fn unclosed_paragraphs_do_not_count_as_depth() {
        let src = "<p>x".repeat(2 * MAX_DEPTH);
        let p = prepare(&src);
        assert!(!p.capped);
        assert_eq!(p.html, src);
    }

    #[test]
    fn truncates_at_a_char_boundary() {
        assert_eq!(truncate("h\u{e9}llo", 2), "h");
    }
}

#[cfg(test)]
mod debug {
    /// `EXTRACT_DEBUG=page.html cargo test debug_prepass -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn debug_prepass() {
        let Ok(path) = std::env::var("EXTRACT_DEBUG") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let (text, _) = super::super::charset::decode(&bytes, None, None);
        let p = super::prepare(&text);
        println!("in={} out={} capped={}", text.len(), p.html.len(), p.capped);
        println!("{}", &p.html[p.html.len().saturating_sub(3000)..]);
    }
}
