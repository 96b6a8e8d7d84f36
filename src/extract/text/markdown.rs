//! The article text as Markdown, and the plain reading of that Markdown.
//!
//! Emitting the text marks each paragraph with the block it sits in
//! ([`Mark`]: heading, list item, block quote, code block with its language,
//! table cell) and builds its inline Markdown ([`Inline`]: emphasis, inline
//! code, everything else escaped; links become their text). [`render`] lays
//! the marks out as CommonMark (GitHub tables), and [`plain`] reads Markdown
//! back to plain text: one line per paragraph, table cell or code block, the
//! syntax gone, white space collapsed. The invariant, tested on every page
//! of the evaluation set: `plain(render(marks)) == text`.
//!
//! [`plain`] reads the subset [`render`] writes: ATX headings, `-` and `1.`
//! list items, `>` quotes, fenced code, pipe tables (with `<br>` inside
//! cells), `*` emphasis, backtick code spans and backslash escapes.

/// Which block a paragraph is set in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Para,
    /// `#` to `######`.
    Heading(u8),
    /// A list item (or, with `first` false, a further paragraph of one).
    Item {
        /// The item's number in an ordered list.
        number: Option<u32>,
        /// Lists it is nested in (1 for a top-level list).
        depth: u8,
        first: bool,
    },
    /// Preformatted text, with the language when the page names it.
    Code {
        lang: Option<String>,
    },
    /// A cell of a table: which table (a counter), row and column.
    Cell {
        table: u32,
        row: u32,
        col: u32,
    },
}

/// How one paragraph of the text is written in Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub block: Block,
    /// Block quotes it is nested in.
    pub quote: u8,
    /// Inline Markdown of the paragraph; for [`Block::Code`], the code as
    /// written (line breaks kept).
    pub md: String,
}

impl Mark {
    /// A plain paragraph of text (escaped).
    pub fn para(text: &str) -> Mark {
        let mut md = String::with_capacity(text.len() + 8);
        escape(text, 0, &mut md, false);
        Mark {
            block: Block::Para,
            quote: 0,
            md,
        }
    }
}

/// Bytes that may need a backslash (all ASCII): everything else is copied as it is.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let bytes = b"\\*`[]~_<&|";
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    t
};

/// Escape `text[from..]` (the rest of `text` gives context) into `out`, so
/// that Markdown shows it as written. `cell`: inside a table cell (`|` too).
/// Runs without special bytes are copied whole.
pub fn escape(text: &str, from: usize, out: &mut String, cell: bool) {
    let bytes = text.as_bytes();
    let mut start = from;
    let mut i = from;
    while let Some(k) = bytes[i..].iter().position(|&b| SPECIAL[usize::from(b)]) {
        let at = i + k;
        // A special byte is ASCII, so `at` and `at + 1` are char boundaries.
        let c = char::from(bytes[at]);
        let prev = text[..at].chars().next_back();
        let next = text[at + 1..].chars().next();
        let needs = match c {
            '_' => {
                !prev.is_some_and(char::is_alphanumeric) || !next.is_some_and(char::is_alphanumeric)
            }
            '<' => next.is_none_or(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '&' => entity_like(&text[at + 1..]),
            '|' => cell,
            _ => true,
        };
        out.push_str(&text[start..at]);
        if needs {
            out.push('\\');
        }
        out.push(c);
        i = at + 1;
        start = i;
    }
    out.push_str(&text[start..]);
}

/// Could `rest` (after an `&`) read as an entity (`amp;`, `#38;`)? Unsure counts as yes.
fn entity_like(rest: &str) -> bool {
    for (n, c) in rest.chars().enumerate() {
        if c == ';' {
            return n > 0;
        }
        if !(c.is_ascii_alphanumeric() || c == '#') || n > 32 {
            return false;
        }
    }
    true
}

/// Builds one paragraph's inline Markdown while its plain text is emitted.
#[derive(Debug, Default)]
pub struct Inline {
    md: String,
    /// Open emphasis markers and whether each was written yet (a marker is
    /// written just before the first character it covers).
    open: Vec<(&'static str, bool)>,
    /// An open inline code span: where it starts in `md` and in the text.
    code: Option<(usize, usize)>,
    /// Raw text inside `<pre>` (line breaks kept).
    raw: String,
}

impl Inline {
    /// Text was appended to the paragraph: `text[from..]` is new.
    pub fn push(&mut self, text: &str, from: usize, cell: bool) {
        if self.open.iter().any(|o| !o.1)
            && let Some(at) = text[from..].find(|c: char| c != ' ')
        {
            // Markers go right before the first character they cover.
            self.md.push_str(&text[from..from + at]);
            for o in self.open.iter_mut().filter(|o| !o.1) {
                self.md.push_str(o.0);
                o.1 = true;
            }
            escape(text, from + at, &mut self.md, cell);
            return;
        }
        escape(text, from, &mut self.md, cell);
    }

    /// Raw text inside `<pre>`.
    pub fn push_raw(&mut self, t: &str, invisible: &[char]) {
        self.raw
            .extend(t.chars().filter(|c| !invisible.contains(c)));
    }

    /// `<em>`/`<i>` (`*`) or `<strong>`/`<b>` (`**`) begins.
    pub fn open(&mut self, marker: &'static str) {
        self.open.push((marker, false));
    }

    /// Is this marker open already?
    pub fn is_open(&self, marker: &str) -> bool {
        self.open.iter().any(|o| o.0 == marker)
    }

    /// The innermost emphasis ends.
    pub fn close(&mut self) {
        if let Some((marker, written)) = self.open.pop()
            && written
        {
            let end = self.md.trim_end_matches(' ').len();
            self.md.insert_str(end, marker);
        }
    }

    /// `<code>` (outside `<pre>`) begins; `text_len` is the paragraph's length so far.
    pub fn code_open(&mut self, text_len: usize) {
        if self.code.is_none() {
            self.code = Some((self.md.len(), text_len));
        }
    }

    /// `<code>` ends: its text becomes a code span when it can be one.
    pub fn code_close(&mut self, text: &str, cell: bool) {
        let Some((md_at, text_at)) = self.code.take() else {
            return;
        };
        let Some(inner) = text.get(text_at..) else {
            return;
        };
        let code = inner.trim_matches(' ');
        if code.is_empty()
            || code.contains('`')
            || (cell && (code.contains('|') || code.contains("<br>")))
        {
            return;
        }
        // Markers written at the start of the span stay outside it.
        let region = &self.md[md_at..];
        let markers = region.len() - region.trim_start_matches('*').len();
        let lead = if inner.starts_with(' ') { " " } else { "" };
        let trail = if inner.ends_with(' ') && inner.len() > 1 {
            " "
        } else {
            ""
        };
        let span = format!("{lead}`{code}`{trail}");
        self.md.truncate(md_at + markers);
        self.md.push_str(&span);
    }

    /// The paragraph is done: its Markdown (or, for code, the raw text).
    /// Open emphasis is closed here and opened again for the next paragraph.
    pub fn take(&mut self, code: bool) -> String {
        self.code = None;
        let out = if code {
            std::mem::take(&mut self.raw)
        } else {
            for i in (0..self.open.len()).rev() {
                if self.open[i].1 {
                    let end = self.md.trim_end_matches(' ').len();
                    self.md.insert_str(end, self.open[i].0);
                }
            }
            self.md.trim_matches(' ').to_string()
        };
        for o in &mut self.open {
            o.1 = false;
        }
        self.md.clear();
        self.raw.clear();
        out
    }
}

/// Lay out marked paragraphs as Markdown.
pub fn render(marks: &[Mark]) -> String {
    let mut out = String::new();
    let mut i = 0;
    // The depth and width of the last item written, for nesting.
    let mut last_item: Option<(u8, usize)> = None;
    while i < marks.len() {
        let m = &marks[i];
        let quote = "> ".repeat(usize::from(m.quote));
        if !out.is_empty() {
            let tight = matches!(m.block, Block::Item { first: true, .. })
                && i > 0
                && matches!(marks[i - 1].block, Block::Item { .. })
                && marks[i - 1].quote == m.quote;
            out.push('\n');
            if !tight {
                // A blank line inside the quotes both blocks share.
                let shared = marks[i - 1].quote.min(m.quote);
                out.push_str(&">".repeat(usize::from(shared)));
                out.push('\n');
            }
        }
        match &m.block {
            Block::Cell { table, .. } => {
                let end = marks[i..]
                    .iter()
                    .position(|n| {
                        n.quote != m.quote
                            || !matches!(n.block, Block::Cell { table: t, .. } if t == *table)
                    })
                    .map_or(marks.len(), |k| i + k);
                table_md(&marks[i..end], &quote, &mut out);
                i = end;
                last_item = None;
                continue;
            }
            Block::Code { lang } => {
                let code = m.md.trim_matches('\n');
                let longest = longest_run(code, '`');
                let fence = "`".repeat(longest.max(2) + 1);
                out.push_str(&quote);
                out.push_str(&fence);
                out.push_str(lang.as_deref().unwrap_or(""));
                for line in code.lines() {
                    out.push('\n');
                    out.push_str(&quote);
                    out.push_str(line.trim_end());
                }
                out.push('\n');
                out.push_str(&quote);
                out.push_str(&fence);
                last_item = None;
            }
            Block::Heading(level) => {
                out.push_str(&quote);
                out.push_str(&"#".repeat(usize::from(*level)));
                out.push(' ');
                line_start(&m.md, &mut out);
                last_item = None;
            }
            Block::Item {
                number,
                depth,
                first,
            } => {
                let depth = match last_item {
                    Some((d, _)) => (*depth).min(d + 1),
                    None => 1,
                };
                let marker = match number {
                    Some(n) => format!("{n}. "),
                    None => "- ".to_string(),
                };
                out.push_str(&quote);
                out.push_str(&" ".repeat(4 * usize::from(depth - 1)));
                if *first {
                    out.push_str(&marker);
                } else {
                    out.push_str(&" ".repeat(marker.len()));
                }
                line_start(&m.md, &mut out);
                last_item = Some((depth, marker.len()));
            }
            Block::Para => {
                out.push_str(&quote);
                line_start(&m.md, &mut out);
                last_item = None;
            }
        }
        i += 1;
    }
    out
}

/// Write inline Markdown that begins a line: characters that would start a
/// block there are escaped.
fn line_start(md: &str, out: &mut String) {
    let digits = md.len() - md.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match md.chars().next() {
        Some('#' | '>' | '-' | '+' | '=' | '|') => out.push('\\'),
        Some('0'..='9')
            if digits <= 9 && matches!(md[digits..].chars().next(), Some('.' | ')')) =>
        {
            out.push_str(&md[..digits]);
            out.push('\\');
            out.push_str(&md[digits..]);
            return;
        }
        _ => {}
    }
    out.push_str(md);
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in s.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// One table: rows in order, the first as the header.
fn table_md(cells: &[Mark], quote: &str, out: &mut String) {
    let mut rows: Vec<(u32, Vec<String>)> = Vec::new();
    for m in cells {
        let Block::Cell { row, col, .. } = m.block else {
            continue;
        };
        if rows.last().is_none_or(|r| r.0 != row) {
            rows.push((row, Vec::new()));
        }
        if let Some((_, r)) = rows.last_mut() {
            let col = col as usize;
            if r.len() <= col {
                r.resize(col + 1, String::new());
            }
            if !r[col].is_empty() {
                r[col].push_str(" <br> ");
            }
            // A cell of dashes alone would read as the header's rule.
            if !m.md.is_empty() && m.md.chars().all(|c| matches!(c, '-' | ':' | ' ')) {
                r[col].push('\\');
            }
            r[col].push_str(&m.md);
        }
    }
    let width = rows.iter().map(|r| r.1.len()).max().unwrap_or(1).max(1);
    for (k, (_, r)) in rows.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(quote);
        out.push('|');
        for c in 0..width {
            out.push(' ');
            out.push_str(r.get(c).map_or("", String::as_str));
            out.push_str(" |");
        }
        if k == 0 {
            out.push('\n');
            out.push_str(quote);
            out.push('|');
            out.push_str(&"---|".repeat(width));
        }
    }
}

/// The plain reading of Markdown (the subset [`render`] writes): one line
/// per paragraph, heading, item, table cell (and part of one split by
/// `<br>`) and code block, white space collapsed, lines joined by `\n`.
pub fn plain(md: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    // An open fence: its length and the quote depth it sits at.
    let mut fence: Option<(usize, usize)> = None;
    let mut code = String::new();
    for line in md.lines() {
        if let Some((len, depth)) = fence {
            let body = strip_quotes(line, Some(depth));
            let t = body.trim();
            if t.len() >= len && t.chars().all(|c| c == '`') {
                fence = None;
                push_collapsed(&mut out, &code);
                code.clear();
            } else {
                code.push(' ');
                code.push_str(body);
            }
            continue;
        }
        let depth = line.len() - line.trim_start_matches(['>', ' ']).len();
        let quotes = line[..depth].matches('>').count();
        let t = line[depth..].trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("```") {
            fence = Some((longest_run(t, '`'), quotes));
            continue;
        }
        if let Some(row) = t.strip_prefix('|') {
            if row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
                continue;
            }
            for cell in split_unescaped(row, "|") {
                for part in split_unescaped(cell, "<br>") {
                    push_collapsed(&mut out, &inline_plain(part.trim()));
                }
            }
            continue;
        }
        push_collapsed(&mut out, &inline_plain(strip_block_marker(t)));
    }
    if fence.is_some() {
        push_collapsed(&mut out, &code);
    }
    out.join("\n")
}

/// `line` without its quote markers (at most `depth` of them when given).
fn strip_quotes(line: &str, depth: Option<usize>) -> &str {
    let mut rest = line;
    let mut n = 0;
    while depth.is_none_or(|d| n < d)
        && let Some(r) = rest.trim_start_matches(' ').strip_prefix('>')
    {
        rest = r.strip_prefix(' ').unwrap_or(r);
        n += 1;
    }
    rest
}

/// A list marker or heading marker off the front of a line.
fn strip_block_marker(t: &str) -> &str {
    if let Some(r) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
    {
        return r.trim_start();
    }
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if (1..=9).contains(&digits)
        && let Some(r) = t[digits..]
            .strip_prefix(". ")
            .or_else(|| t[digits..].strip_prefix(") "))
    {
        return r.trim_start();
    }
    let hashes = t.len() - t.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && (t.len() == hashes || t[hashes..].starts_with(' ')) {
        return t[hashes..].trim_start();
    }
    t
}

/// Split on `sep` where it is not escaped by a backslash.
fn split_unescaped<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut parts = Vec::new();
    let (mut start, mut i) = (0, 0);
    let bytes = s.as_bytes();
    while i < s.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        // `sep` is ASCII, so a match starts and ends on char boundaries.
        if bytes[i..].starts_with(sep.as_bytes()) {
            parts.push(&s[start..i]);
            i += sep.len();
            start = i;
            continue;
        }
        i += 1;
    }
    if start < s.len() {
        parts.push(&s[start..]);
    }
    parts
}

/// Inline Markdown to text: escapes resolved, emphasis markers dropped, code spans kept as written.
fn inline_plain(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        match c {
            '\\' => {
                let mut it = rest[1..].chars();
                match it.next() {
                    Some(n) if n.is_ascii_punctuation() => {
                        out.push(n);
                        rest = &rest[1 + n.len_utf8()..];
                    }
                    _ => {
                        out.push('\\');
                        rest = &rest[1..];
                    }
                }
            }
            '*' => rest = &rest[1..],
            '`' => {
                let n = rest.len() - rest.trim_start_matches('`').len();
                let after = &rest[n..];
                match find_run(after, n) {
                    Some(end) => {
                        let inner = &after[..end];
                        let inner =
                            if inner.len() > 2 && inner.starts_with(' ') && inner.ends_with(' ') {
                                &inner[1..inner.len() - 1]
                            } else {
                                inner
                            };
                        out.push_str(inner);
                        rest = &after[end + n..];
                    }
                    None => {
                        out.push_str(&rest[..n]);
                        rest = after;
                    }
                }
            }
            _ => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// Where the next run of exactly `n` backticks starts in `s`.
fn find_run(s: &str, n: usize) -> Option<usize> {
    let mut i = 0;
    let b = s.as_bytes();
    while i < b.len() {
        if b[i] == b'`' {
            let run = s[i..].len() - s[i..].trim_start_matches('`').len();
            if run == n {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// Push `s` with white space collapsed and trimmed, when anything is left.
fn push_collapsed(out: &mut Vec<String>, s: &str) {
    let mut t = String::with_capacity(s.len());
    for w in s.split(char::is_whitespace).filter(|w| !w.is_empty()) {
        if !t.is_empty() {
            t.push(' ');
        }
        t.push_str(w);
    }
    if !t.is_empty() {
        out.push(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(block: Block, quote: u8, md: &str) -> Mark {
        Mark {
            block,
            quote,
            md: md.into(),
        }
    }

    fn item(number: Option<u32>, depth: u8, first: bool) -> Block {
        Block::Item {
            number,
            depth,
            first,
        }
    }

    #[test]
    fn renders_blocks_and_reads_them_back() {
        let cell = |row, col| Block::Cell { table: 1, row, col };
        let marks = vec![
            mark(Block::Heading(2), 0, "A *big* day"),
            mark(Block::Para, 0, "Intro with `code` and **bold**."),
            mark(item(None, 1, true), 0, "one"),
            mark(item(None, 2, true), 0, "nested"),
            mark(item(None, 1, false), 0, "more of one"),
            mark(item(Some(3), 1, true), 0, "three"),
            mark(Block::Para, 1, "Quoted"),
            mark(
                Block::Code {
                    lang: Some("rust".into()),
                },
                0,
                "fn main() {\n    ```x\n}\n",
            ),
            mark(cell(0, 0), 0, "Model"),
            mark(cell(0, 1), 0, "Score"),
            mark(cell(1, 0), 0, "A"),
            mark(cell(1, 1), 0, "-"),
            mark(cell(1, 1), 0, "92"),
            mark(cell(2, 1), 0, "b\\|c"),
        ];
        let md = render(&marks);
        assert_eq!(
            md,
            "## A *big* day\n\nIntro with `code` and **bold**.\n\n- one\n    - nested\n\n  more of one\n\
             3. three\n\n> Quoted\n\n````rust\nfn main() {\n    ```x\n}\n````\n\n\
             | Model | Score |\n|---|---|\n| A | \\- <br> 92 |\n|  | b\\|c |"
        );
        assert_eq!(
            plain(&md),
            "A big day\nIntro with code and bold.\none\nnested\nmore of one\nthree\nQuoted\n\
             fn main() { ```x }\nModel\nScore\nA\n-\n92\nb|c"
        );
    }

    #[test]
    fn escaped_text_reads_back_as_written() {
        for text in [
            "# not a heading",
            "- not an item",
            "1. not a list",
            "2024) was the year",
            "> not a quote",
            "| not a table",
            "Stars * and _under_ and snake_case and `ticks` and \\ back",
            "Tags <b>bold</b> and a < b and AT&T and &amp; and [link](x) ~~no~~",
            "=== underline",
            "---",
            "***",
            "+ plus",
        ] {
            let m = Mark::para(text);
            assert_eq!(plain(&render(std::slice::from_ref(&m))), text, "{}", m.md);
            let i = mark(item(None, 1, true), 0, &m.md);
            assert_eq!(plain(&render(&[i])), text);
            let h = mark(Block::Heading(3), 1, &m.md);
            assert_eq!(plain(&render(&[h])), text);
        }
    }

    #[test]
    fn inline_emphasis_and_code_spans() {
        let mut i = Inline::default();
        let mut text = String::from("Say ");
        i.push(&text, 0, false);
        i.open("**");
        let at = text.len();
        text.push_str("hello");
        i.push(&text, at, false);
        i.close();
        let at = text.len();
        text.push_str(" to ");
        i.push(&text, at, false);
        i.code_open(text.len());
        let at = text.len();
        text.push_str("x_1*2");
        i.push(&text, at, false);
        i.code_close(&text, false);
        i.open("*");
        let at = text.len();
        text.push_str(" now ");
        i.push(&text, at, false);
        let md = i.take(false);
        assert_eq!(md, "Say **hello** to `x_1*2` *now*");
        assert_eq!(plain(&md), text.trim());
        // The emphasis still open goes on in the next paragraph.
        let mut next = String::new();
        next.push_str("later");
        i.push(&next, 0, false);
        i.close();
        assert_eq!(i.take(false), "*later*");
    }
}
