//! A cheap lexical pass over the decoded page before html5ever sees it.
//!
//! It does these things in one linear scan:
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
//! * truncates pages larger than [`MAX_BYTES`];
//! * for the article parse ([`prepare_folding`]), folds each long run of
//!   white space between two tags into one marker character, which the
//!   tree turns back into one white space character that remembers the
//!   run's length.
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
    /// Whether white space runs were folded into markers
    /// ([`prepare_folding`]); parse with [`super::dom::Dom::parse_folded`].
    pub folded: bool,
}

/// Fewest bytes (as the tree would hold them) of a white space run worth
/// folding: a marker is four bytes of UTF-8.
const MIN_FOLD: usize = 5;
/// Most: a marker's code point carries the length in 16 bits.
const MAX_FOLD: usize = 0xFFF0;
/// Markers: code points of the two supplementary private use planes, which
/// a page that gets folded does not use ([`prepare_folding`]). Plane 15 for
/// a run without a line break, plane 16 for one with; the length is the low
/// 16 bits.
const FOLD_SPACE: u32 = 0xF_0000;
const FOLD_LINE: u32 = 0x10_0000;

/// The marker for a white space run of `len` bytes.
fn fold_marker(len: usize, line: bool) -> char {
    let base = if line { FOLD_LINE } else { FOLD_SPACE };
    // len <= MAX_FOLD: always a valid, assigned-to-private-use code point.
    char::from_u32(base + len as u32).unwrap_or(' ')
}

/// What a marker stands for: the one white space character the tree gets
/// (`'\n'` when the run held a line break, else `' '`) and the run's length in bytes.
pub(crate) fn unfold_marker(c: char) -> Option<(char, u32)> {
    let c = u32::from(c);
    if c & 0xFFFF > MAX_FOLD as u32 {
        return None;
    }
    match c & !0xFFFF {
        FOLD_SPACE => Some((' ', c & 0xFFFF)),
        FOLD_LINE => Some(('\n', c & 0xFFFF)),
        _ => None,
    }
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
    /// [`white_space_is_text`] with this element on top of the stack, as
    /// seen from outside a table cell (`.0`) and from inside one (`.1`).
    ws: (bool, bool),
}

/// [`Open::ws`] of an element `name` opened inside `parent`'s (`None`: at the top).
fn ws_state(name: &str, parent: Option<(bool, bool)>) -> (bool, bool) {
    let (out, cell) = parent.unwrap_or((false, false));
    match name {
        "pre" | "listing" | "plaintext" | "textarea" | "xmp" | "frameset" | "select" => {
            (false, false)
        }
        // Inside a cell, the rows around it do not count.
        "td" | "th" | "caption" => (cell, cell),
        "table" | "tbody" | "thead" | "tfoot" | "tr" | "colgroup" => (false, cell),
        "body" => (true, true),
        _ => (out, cell),
    }
}

/// Run the pass.
pub fn prepare(text: &str) -> Prepared {
    prepare_level(text, true, false)
}

/// Run the pass, and fold each long run of white space between two tags,
/// where the tree builder takes white space as text (inside `<body>`, not in
/// a table's rows or a `<select>`, not in preformatted text), into one
/// marker character that stands for the run ([`unfold_marker`]).
///
/// Indentation between tags is a twentieth of a typical page, and html5ever
/// pays for it byte by byte (the tokenizer, the text it copies, the passes
/// over text after it); a marker costs one character. The marker is not
/// white space to the tree builder, which is why folding stays where white
/// space and other text are built alike. The tree's text node gets one white
/// space character and remembers the run's length ([`super::dom::Dom::text_len`]),
/// so length caps read the same as without folding. A page that itself holds
/// characters of the marker planes is not folded.
pub fn prepare_folding(text: &str) -> Prepared {
    let fold = memchr::memchr2(0xF3, 0xF4, truncate(text, MAX_BYTES).as_bytes()).is_none();
    prepare_level(text, true, fold)
}

/// Fold `text[from..to]` into a marker (see [`prepare_folding`]) when it is
/// a white space run of [`MIN_FOLD`] to [`MAX_FOLD`] bytes and white space
/// is text where it stands (`text_here`, [`white_space_is_text`]). Whether the run is all white
/// space (or empty), folded or not.
fn fold_run(
    text: &str,
    (from, to): (usize, usize),
    text_here: bool,
    out: &mut String,
    copied: &mut usize,
) -> bool {
    let run = &text.as_bytes()[from..to];
    let (mut crlf, mut line) = (0, false);
    for (k, &b) in run.iter().enumerate() {
        match b {
            b' ' | b'\t' | b'\x0c' => {}
            b'\n' => line = true,
            // The tokenizer makes `\r\n` and a lone `\r` one `\n`.
            b'\r' => {
                line = true;
                crlf += usize::from(run.get(k + 1) == Some(&b'\n'));
            }
            _ => return false,
        }
    }
    let len = run.len() - crlf;
    if (MIN_FOLD..=MAX_FOLD).contains(&len) && text_here {
        out.push_str(&text[*copied..from]);
        out.push(fold_marker(len, line));
        *copied = to;
    }
    true
}

/// Whether the tree builder takes white space as text inside the open
/// elements `stack`: inside `<body>`, outside a table's rows (a cell is
/// fine), a `<select>` and preformatted text. Kept up as the stack grows
/// ([`Open::ws`]); [`white_space_is_text_walk`] is the same rule walked.
fn white_space_is_text(stack: &[Open]) -> bool {
    stack.last().is_some_and(|o| o.ws.0)
}

/// [`white_space_is_text`] by walking the stack (the rule as written; a test
/// holds the two together).
#[cfg(test)]
fn white_space_is_text_walk(stack: &[Open], names: &str) -> bool {
    let mut cell = false;
    for o in stack.iter().rev() {
        match &names[o.start..o.end] {
            "pre" | "listing" | "plaintext" | "textarea" | "xmp" | "frameset" | "select" => {
                return false;
            }
            "td" | "th" | "caption" => cell = true,
            "table" | "tbody" | "thead" | "tfoot" | "tr" | "colgroup" if !cell => return false,
            "body" => return true,
            _ => {}
        }
    }
    false
}

/// The pass; `markup` says whether template scripts' markup is handed on
/// (not within such markup: it is handed on once, its scripts dropped);
/// `fold` whether white space runs are folded ([`prepare_folding`]).
fn prepare_level(text: &str, markup: bool, fold: bool) -> Prepared {
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
    // Just past the last tag kept as it was (what a folded run follows).
    let mut tag_end_at = usize::MAX;
    out.folded = fold;
    while let Some(off) = memchr::memchr(b'<', &bytes[i..]) {
        let lt = i + off;
        let next = bytes.get(lt + 1).copied().unwrap_or(b' ');
        if next == b'!' {
            // Comment, doctype or CDATA: drop comments, keep the rest.
            if bytes[lt..].starts_with(b"<!--") {
                let end = memchr::memmem::find(&bytes[lt + 4..], b"-->")
                    .map_or(bytes.len(), |e| lt + 4 + e + 3);
                // A dropped comment is not there: white space on both sides
                // of it is one run.
                if fold && i == tag_end_at {
                    let here = white_space_is_text(&stack);
                    if fold_run(text, (i, lt), here, &mut out.html, &mut copied) {
                        tag_end_at = end;
                    }
                }
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
                if fold && !dropped && i == tag_end_at {
                    let here = white_space_is_text(&stack);
                    fold_run(text, (i, lt), here, &mut out.html, &mut copied);
                }
                names.truncate(stack[k].start);
                stack.truncate(k);
                if dropped {
                    out.html.push_str(&text[copied..lt]);
                    copied = end;
                } else {
                    tag_end_at = end;
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
                // As a comment: gone, unless it hands markup on (below).
                let blank = fold
                    && i == tag_end_at
                    && fold_run(
                        text,
                        (i, lt),
                        white_space_is_text(&stack),
                        &mut out.html,
                        &mut copied,
                    );
                out.html.push_str(&text[copied..lt]);
                let kept = out.html.len();
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
                if blank && out.html.len() == kept {
                    tag_end_at = after;
                }
            }
            if kind == TagKind::RawKept {
                tag_end_at = after;
            }
            i = after;
            continue;
        }
        // Depth one short of the cap: this tag is kept whatever it closes.
        if fold && i == tag_end_at && stack.len() + 1 < MAX_DEPTH {
            let here = white_space_is_text(&stack);
            fold_run(text, (i, lt), here, &mut out.html, &mut copied);
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
            tag_end_at = end;
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
        } else {
            tag_end_at = end;
        }
        let start = names.len();
        names.push_str(&name);
        let ws = ws_state(&name, stack.last().map(|o| o.ws));
        stack.push(Open {
            start,
            end: names.len(),
            dropped,
            ws,
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
    let inner = prepare_level(content, false, false);
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

    /// The markers in a folded page, decoded: (white space char, length).
    fn markers(html: &str) -> Vec<(char, u32)> {
        html.chars().filter_map(unfold_marker).collect()
    }

    #[test]
    fn folds_long_white_space_between_tags_in_the_body_only() {
        let page = "<html><head>\n      <title>t</title>\n      </head><body>\n        \
                    <div>\n          <p>One two</p>        <p>x</p>\r\n\r\n    </div>\n  \
                    <pre>\n       keep</pre>\n      <table>\n        <tr>\n          \
                    <td>\n            <b>cell</b>\n          </td></tr></table></body></html>";
        let p = prepare_folding(page);
        assert!(p.folded);
        // <body>..<div>, <div>..<p>, </p>..<p> (no line break), </p>..</div>
        // (`\r\n\r\n    `: two line breaks and four spaces in the tree),
        // </pre>..<table>, and the two inside the cell; </div>..<pre> is short.
        assert_eq!(
            markers(&p.html),
            [
                ('\n', 9),
                ('\n', 11),
                (' ', 8),
                ('\n', 6),
                ('\n', 7),
                ('\n', 13),
                ('\n', 11)
            ]
        );
        assert!(p.html.contains("<pre>\n       keep</pre>"), "{}", p.html);
        assert!(p.html.contains("<head>\n      <title>"), "head untouched");
        assert!(
            p.html.contains("<table>\n        <tr>\n          <td>"),
            "rows untouched"
        );
        // Without folding, or on a page using the marker planes, nothing changes.
        assert!(markers(&prepare(page).html).is_empty());
        let odd = format!("{page}\u{F0041}");
        let p = prepare_folding(&odd);
        assert!(!p.folded);
        assert_eq!(p.html, prepare(&odd).html);
    }

    #[test]
    fn white_space_rule_kept_up_is_the_rule_walked() {
        let tags = [
            "body", "div", "table", "tbody", "tr", "td", "th", "caption", "pre", "select", "p",
            "colgroup", "thead", "span",
        ];
        // Every stack of up to five of these (14^5 = 537,824 would be slow in
        // debug: a fixed stride through them).
        let mut n = 0u64;
        for code in (0..14u64.pow(5)).step_by(7) {
            let (mut stack, mut names, mut c) = (Vec::new(), String::new(), code);
            for _ in 0..=(code % 5) {
                let name = tags[(c % 14) as usize];
                c /= 14;
                let start = names.len();
                names.push_str(name);
                let ws = ws_state(name, stack.last().map(|o: &Open| o.ws));
                stack.push(Open {
                    start,
                    end: names.len(),
                    dropped: false,
                    ws,
                });
            }
            assert_eq!(
                white_space_is_text(&stack),
                white_space_is_text_walk(&stack, &names),
                "{names}"
            );
            n += u64::from(white_space_is_text(&stack));
        }
        assert!(n > 1000, "some stacks take white space as text ({n})");
    }

    #[test]
    fn markers_round_trip() {
        for (len, line) in [
            (MIN_FOLD, false),
            (77, true),
            (MAX_FOLD, true),
            (MAX_FOLD, false),
        ] {
            let w = if line { '\n' } else { ' ' };
            assert_eq!(unfold_marker(fold_marker(len, line)), Some((w, len as u32)));
        }
        assert_eq!(unfold_marker('a'), None);
        assert_eq!(unfold_marker('\u{FFFFF}'), None);
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
        let p = super::prepare_folding(&text);
        if let Ok(dump) = std::env::var("EXTRACT_DUMP") {
            std::fs::write(dump, &p.html).unwrap();
        }
        println!("in={} out={} capped={}", text.len(), p.html.len(), p.capped);
        println!("{}", &p.html[p.html.len().saturating_sub(3000)..]);
    }
}
