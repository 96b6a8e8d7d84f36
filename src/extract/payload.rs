//! Hydration payloads: the data a framework's scripts build the page from,
//! read when the page's own markup carries no body (a page rendered in the
//! browser only).
//!
//! Which scripts are payloads ([`kind`], asked by the pre-pass):
//!
//! | kind | script |
//! |---|---|
//! | `next_data` | `<script id="__NEXT_DATA__" type="application/json">` (Next.js pages router) |
//! | `next_flight` | `self.__next_f.push([1,"…"])` (Next.js app router: a React server components stream) |
//! | `nuxt_data` | `<script id="__NUXT_DATA__">` (Nuxt 3, a flat `devalue` array) |
//! | `state` | `window.__NUXT__=…` (Nuxt 2), `__APOLLO_STATE__`, `__INITIAL_STATE__`, `__PRELOADED_STATE__` |
//!
//! [`body`] turns them into HTML for the ordinary text pass: a flight stream
//! is rendered element by element (its `["$","p",null,{"children":…}]`
//! trees); a JSON state is searched for the article body, which is either a
//! string of HTML or prose, or an array of typed blocks (`paragraph`,
//! `heading`, Portable Text, Contentful rich text, ...); the longest wins.
//! JavaScript that is not JSON gives its string literals. The walks over the
//! JSON are bounded by [`MAX_DEPTH`].

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// What kind of payload a script holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NextData,
    NextFlight,
    NuxtData,
    State,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::NextData => "next_data",
            Kind::NextFlight => "next_flight",
            Kind::NuxtData => "nuxt_data",
            Kind::State => "state",
        }
    }
}

/// How deep the JSON walks go.
const MAX_DEPTH: usize = 48;
/// Shortest string taken for a body.
const MIN_BODY_CHARS: usize = 200;

/// The kind of payload a script is, from its start tag and its content.
pub fn kind(start_tag: &str, body: &str) -> Option<Kind> {
    let tag = start_tag.to_ascii_lowercase();
    if tag.contains("__next_data__") {
        return Some(Kind::NextData);
    }
    if tag.contains("__nuxt_data__") {
        return Some(Kind::NuxtData);
    }
    let head = body.trim_start();
    let head = &head[..head.floor_char_boundary(80)];
    if head.contains("self.__next_f") {
        return Some(Kind::NextFlight);
    }
    [
        "__NUXT__",
        "__APOLLO_STATE__",
        "__INITIAL_STATE__",
        "__PRELOADED_STATE__",
    ]
    .iter()
    .any(|k| head.contains(k))
    .then_some(Kind::State)
}

/// The page's payloads as HTML in which the ordinary text pass finds the
/// article: the flight stream rendered, and the best body of each JSON
/// state. Returns the HTML and the kinds read.
pub fn body(payloads: &[(Kind, String)]) -> Option<(String, Vec<&'static str>)> {
    let mut html = String::new();
    let mut kinds = Vec::new();
    let flight: Vec<&str> = payloads
        .iter()
        .filter(|(k, _)| *k == Kind::NextFlight)
        .map(|(_, s)| s.as_str())
        .collect();
    if !flight.is_empty() {
        let rendered = flight_html(&flight);
        if !rendered.is_empty() {
            html.push_str(&rendered);
            kinds.push(Kind::NextFlight.as_str());
        }
    }
    let mut best: Option<(usize, String, Kind)> = None;
    for (k, raw) in payloads.iter().filter(|(k, _)| *k != Kind::NextFlight) {
        let found = match k {
            Kind::NuxtData => serde_json::from_str::<Value>(raw)
                .ok()
                .map(|v| devalue(&v))
                .and_then(|v| best_body(&v)),
            _ => state_json(raw)
                .and_then(|v| best_body(&v))
                .or_else(|| literal_body(raw)),
        };
        if let Some((len, h)) = found
            && best.as_ref().is_none_or(|b| len > b.0)
        {
            best = Some((len, h, *k));
        }
    }
    if let Some((_, h, k)) = best {
        html.push_str(&h);
        kinds.push(k.as_str());
    }
    (!html.is_empty()).then(|| (format!("<html><body>{html}</body></html>"), kinds))
}

/// The JSON value of a state script: the whole text, or what follows the
/// first `=` up to the last `}`.
fn state_json(raw: &str) -> Option<Value> {
    let t = raw.trim();
    if let Ok(v) = serde_json::from_str(t) {
        return Some(v);
    }
    let start = t.find('=').map(|i| i + 1)?;
    let t = t[start..].trim_start();
    let end = t.rfind('}')?;
    serde_json::from_str(&t[..=end]).ok()
}

/// A Nuxt `devalue` array turned back into the value it encodes (objects
/// and arrays hold indices into the array; `["Reactive", i]` and its
/// relatives wrap one).
fn devalue(v: &Value) -> Value {
    let Value::Array(all) = v else {
        return v.clone();
    };
    fn resolve(all: &[Value], i: &Value, depth: usize) -> Value {
        let Some(ix) = i.as_u64().and_then(|n| usize::try_from(n).ok()) else {
            return Value::Null;
        };
        let Some(node) = all.get(ix) else {
            return Value::Null;
        };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        match node {
            Value::Array(items) => {
                if let Some(Value::String(tag)) = items.first() {
                    return match tag.as_str() {
                        "Reactive" | "ShallowReactive" | "Ref" | "ShallowRef" | "EmptyRef" => items
                            .get(1)
                            .map_or(Value::Null, |x| resolve(all, x, depth + 1)),
                        _ => Value::Null,
                    };
                }
                Value::Array(items.iter().map(|x| resolve(all, x, depth + 1)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, x)| (k.clone(), resolve(all, x, depth + 1)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    resolve(all, &Value::from(0), 0)
}

static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)</?(p|br|h[1-6]|div|li|ul|blockquote)\b").expect("static regex")
});
/// Block types of rich-text formats that hold article text.
static BLOCK_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(paragraph|p|text|rich-?text|heading(-\d)?|h[1-6]|header|subhead(ing)?|block|list|list-?item|unordered-list|ordered-list|quote|blockquote|core/paragraph|core/heading|core/list)$")
        .expect("static regex")
});
/// Keys whose strings are a block's text.
const TEXT_KEYS: &[&str] = &[
    "text",
    "value",
    "content",
    "html",
    "body",
    "children",
    "items",
    "innerHTML",
];
/// Keys naming a block's type.
const TYPE_KEYS: &[&str] = &[
    "type",
    "_type",
    "nodeType",
    "blockType",
    "kind",
    "__typename",
    "name",
];

/// The longest article body in a JSON value: (its characters, its HTML).
fn best_body(root: &Value) -> Option<(usize, String)> {
    let mut best: Option<(usize, String)> = None;
    let mut consider = |len: usize, html: String| {
        if len >= MIN_BODY_CHARS && best.as_ref().is_none_or(|b| len > b.0) {
            best = Some((len, html));
        }
    };
    let mut stack = vec![(root, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        match v {
            Value::String(s) if s.len() >= MIN_BODY_CHARS => {
                if let Some(h) = string_body(s) {
                    consider(s.chars().count(), h);
                }
            }
            Value::Array(items) => {
                if let Some((len, h)) = blocks_body(items) {
                    consider(len, h);
                }
                stack.extend(items.iter().rev().map(|x| (x, depth + 1)));
            }
            Value::Object(map) => stack.extend(map.values().map(|x| (x, depth + 1))),
            _ => {}
        }
    }
    best
}

/// A string as a body: HTML as it is, prose as paragraphs at its line breaks.
fn string_body(s: &str) -> Option<String> {
    if HTML_TAG.is_match(s) {
        return Some(s.to_string());
    }
    // Prose: words and sentences, not a URL, a token or code.
    let words = s.split_whitespace().count();
    if words < 30 || !s.contains(". ") && !s.contains("。") {
        return None;
    }
    let mut h = String::new();
    for line in s.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let _ = write!(h, "<p>{}</p>", escape(line));
    }
    Some(h)
}

/// An array of typed blocks as a body, when most of its items are blocks of
/// text.
fn blocks_body(items: &[Value]) -> Option<(usize, String)> {
    if items.len() < 2 {
        return None;
    }
    let typed: Vec<(&str, &Value)> = items
        .iter()
        .filter_map(|x| {
            let o = x.as_object()?;
            let t = TYPE_KEYS.iter().find_map(|k| o.get(*k)?.as_str())?;
            BLOCK_TYPE.is_match(t).then_some((t, x))
        })
        .collect();
    if typed.len() * 2 < items.len() {
        return None;
    }
    let mut html = String::new();
    let mut len = 0;
    for (t, block) in typed {
        let mut text = String::new();
        block_text(block, &mut text);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        len += text.chars().count();
        let tag = if t.to_ascii_lowercase().contains("head")
            || t.starts_with(['h', 'H']) && t.len() == 2
        {
            "h2"
        } else if t.to_ascii_lowercase().contains("quote") {
            "blockquote"
        } else {
            "p"
        };
        if HTML_TAG.is_match(text) {
            let _ = write!(html, "<div>{text}</div>");
        } else {
            let _ = write!(html, "<{tag}>{}</{tag}>", escape(text));
        }
    }
    Some((len, html))
}

/// The text strings of a block, under its text keys, in order.
fn block_text(v: &Value, out: &mut String) {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        match v {
            Value::String(s) => out.push_str(s),
            Value::Array(items) => stack.extend(items.iter().rev().map(|x| (x, depth + 1))),
            Value::Object(o) => {
                for k in TEXT_KEYS.iter().rev() {
                    if let Some(x) = o.get(*k) {
                        stack.push((x, depth + 1));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The longest string literal of a script that reads as a body (a Nuxt 2
/// `window.__NUXT__=(function(a,b){…}(…))` is JavaScript, not JSON).
fn literal_body(raw: &str) -> Option<(usize, String)> {
    static LITERAL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""((?:[^"\\]|\\.){200,})""#).expect("static regex"));
    LITERAL
        .captures_iter(raw)
        .filter_map(|c| serde_json::from_str::<String>(&format!("\"{}\"", &c[1])).ok())
        .filter_map(|s| string_body(&s).map(|h| (s.chars().count(), h)))
        .max_by_key(|b| b.0)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A React server components stream (the strings of `self.__next_f.push`)
/// rendered as HTML: each row that no other row refers to, with references
/// to other rows (`"$L5"`, `"$5"`) and text rows (`5:T1a2,…`) resolved in
/// place.
fn flight_html(scripts: &[&str]) -> String {
    let mut stream = String::new();
    for s in scripts {
        for arg in push_args(s) {
            if let Ok(Value::Array(a)) = serde_json::from_str::<Value>(arg)
                && a.first().and_then(Value::as_u64) == Some(1)
                && let Some(Value::String(chunk)) = a.get(1)
            {
                stream.push_str(chunk);
            }
        }
    }
    let rows = flight_rows(&stream);
    let mut referenced = std::collections::HashSet::new();
    for row in rows.values() {
        if let Row::Json(v) = row {
            refs(v, &mut referenced);
        }
    }
    let mut ids: Vec<&String> = rows.keys().filter(|k| !referenced.contains(*k)).collect();
    ids.sort_by_key(|k| u64::from_str_radix(k, 16).unwrap_or(u64::MAX));
    let mut r = Renderer {
        rows: &rows,
        out: String::new(),
        open: Vec::new(),
    };
    for id in ids {
        if let Some(Row::Json(v)) = rows.get(id) {
            r.node(v, 0);
        }
    }
    r.out
}

/// The argument texts of `self.__next_f.push(…)` calls.
fn push_args(script: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = script;
    while let Some(i) = rest.find(".push(") {
        rest = &rest[i + 6..];
        // The argument is a JSON array: find its end by brackets and strings.
        let b = rest.as_bytes();
        let (mut depth, mut in_str, mut esc, mut end) = (0i32, false, false, None);
        for (j, &c) in b.iter().enumerate() {
            if in_str {
                match (esc, c) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(e) => {
                out.push(&rest[..e]);
                rest = &rest[e..];
            }
            None => break,
        }
    }
    out
}

enum Row {
    Json(Value),
    Text(String),
}

/// The rows of a flight stream: `id:json\n`, and text rows
/// `id:T<hex byte length>,<text>` that no newline ends.
fn flight_rows(stream: &str) -> std::collections::HashMap<String, Row> {
    let mut rows = std::collections::HashMap::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let Some(colon) = rest.find(':') else { break };
        let id = rest[..colon].trim().to_string();
        let after = &rest[colon + 1..];
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) || id.len() > 8 {
            // Not a row start: skip to the next line.
            match rest.find('\n') {
                Some(n) => rest = &rest[n + 1..],
                None => break,
            }
            continue;
        }
        if let Some(t) = after.strip_prefix('T')
            && let Some(comma) = t.find(',')
            && let Ok(len) = usize::from_str_radix(&t[..comma], 16)
        {
            let text = &t[comma + 1..];
            let end = text.floor_char_boundary(len.min(text.len()));
            rows.insert(id, Row::Text(text[..end].to_string()));
            rest = &text[end..];
            continue;
        }
        let end = after.find('\n').unwrap_or(after.len());
        let line = &after[..end];
        if line.starts_with(['[', '{', '"'])
            && let Ok(v) = serde_json::from_str::<Value>(line)
        {
            rows.insert(id, Row::Json(v));
        }
        rest = after.get(end + 1..).unwrap_or("");
    }
    rows
}

/// A reference to another row: `$L5`, `$5`, `$@5` (hex ids).
fn row_ref(s: &str) -> Option<&str> {
    let r = s.strip_prefix('$')?;
    let r = r
        .strip_prefix('L')
        .or_else(|| r.strip_prefix('@'))
        .unwrap_or(r);
    (!r.is_empty() && r.len() <= 8 && r.bytes().all(|b| b.is_ascii_hexdigit())).then_some(r)
}

fn refs(v: &Value, out: &mut std::collections::HashSet<String>) {
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        match v {
            Value::String(s) => {
                if let Some(r) = row_ref(s) {
                    out.insert(r.to_string());
                }
            }
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, depth + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, depth + 1))),
            _ => {}
        }
    }
}

/// Elements whose content is never text.
const SKIPPED: &[&str] = &[
    "script", "style", "link", "meta", "title", "template", "noscript", "head", "svg",
];

struct Renderer<'a> {
    rows: &'a std::collections::HashMap<String, Row>,
    out: String,
    /// Rows being rendered (a reference back to one is a cycle).
    open: Vec<String>,
}

impl Renderer<'_> {
    fn node(&mut self, v: &Value, depth: usize) {
        if depth > MAX_DEPTH * 2 {
            return;
        }
        match v {
            Value::String(s) => {
                if let Some(r) = row_ref(s) {
                    self.row(r, depth);
                } else {
                    let s = s
                        .strip_prefix('$')
                        .filter(|t| t.starts_with('$'))
                        .unwrap_or(s);
                    self.out.push_str(&escape(s));
                }
            }
            Value::Number(n) => {
                let _ = write!(self.out, "{n}");
            }
            Value::Array(a) if a.first().and_then(Value::as_str) == Some("$") => {
                self.element(a, depth);
            }
            Value::Array(a) => {
                for x in a {
                    self.node(x, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn row(&mut self, id: &str, depth: usize) {
        if self.open.iter().any(|o| o == id) {
            return;
        }
        let rows = self.rows;
        match rows.get(id) {
            Some(Row::Text(t)) => self.out.push_str(&escape(t)),
            Some(Row::Json(v)) => {
                self.open.push(id.to_string());
                self.node(v, depth + 1);
                self.open.pop();
            }
            None => {}
        }
    }

    /// `["$", type, key, props]`: a tag is written with its class and id; a
    /// component (`"$L1"`) is its children.
    fn element(&mut self, a: &[Value], depth: usize) {
        let ty = a.get(1).and_then(Value::as_str).unwrap_or("");
        let props = a.get(3).and_then(Value::as_object);
        let children = props.and_then(|p| p.get("children"));
        let inner = props
            .and_then(|p| p.get("dangerouslySetInnerHTML"))
            .and_then(|d| d.get("__html"))
            .and_then(Value::as_str);
        let is_tag = !ty.is_empty()
            && !ty.starts_with('$')
            && ty.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if is_tag && SKIPPED.contains(&ty) {
            return;
        }
        if is_tag {
            let _ = write!(self.out, "<{ty}");
            for (attr, key) in [
                ("class", "className"),
                ("id", "id"),
                ("itemprop", "itemProp"),
            ] {
                if let Some(v) = props.and_then(|p| p.get(key)).and_then(Value::as_str) {
                    let _ = write!(self.out, " {attr}=\"{}\"", escape(v).replace('"', "&quot;"));
                }
            }
            self.out.push('>');
        }
        if let Some(h) = inner {
            self.out.push_str(h);
        } else if let Some(c) = children {
            self.node(c, depth + 1);
        }
        if is_tag {
            let _ = write!(self.out, "</{ty}>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prose(n: usize) -> String {
        "The council voted on Tuesday to expand the programme, which now covers every school in the district. "
            .repeat(n)
    }

    #[test]
    fn a_flight_stream_renders_its_elements() {
        let p = prose(3);
        let rows = format!(
            "1:I[\"123\",[],\"Nav\"]\n2:T{:x},{p}0:[\"$\",\"main\",null,{{\"children\":[[\"$\",\"h1\",null,{{\"children\":\"Head\"}}],[\"$\",\"$L1\",null,{{\"children\":[\"$\",\"p\",null,{{\"children\":\"$2\"}}]}}]]}}]\n",
            p.len()
        );
        let script = format!(
            "self.__next_f.push([0]);self.__next_f.push([1,{}])",
            serde_json::to_string(&rows).unwrap()
        );
        let (html, kinds) = body(&[(Kind::NextFlight, script)]).unwrap();
        assert_eq!(kinds, ["next_flight"]);
        assert!(html.contains("<main><h1>Head</h1><p>The council"), "{html}");
    }

    #[test]
    fn a_json_state_gives_its_longest_body() {
        let blocks = serde_json::json!({"props": {"pageProps": {
        "related": [{"title": "Other", "summary": "short"}],
        "article": {"body": [
            {"type": "paragraph", "children": [{"text": prose(2)}]},
            {"type": "heading", "children": [{"text": "A subheading"}]},
            {"type": "paragraph", "children": [{"text": prose(1)}]}
        ]}}}});
        let (html, kinds) = body(&[(Kind::NextData, blocks.to_string())]).unwrap();
        assert_eq!(kinds, ["next_data"]);
        assert!(html.contains("<h2>A subheading</h2>"), "{html}");
        assert_eq!(html.matches("<p>").count(), 2, "{html}");
    }

    #[test]
    fn nuxt_devalue_and_javascript_state() {
        let html_body = format!("<p>{}</p><p>{}</p>", prose(1), prose(2));
        let nuxt = serde_json::json!([{"data": 1}, ["ShallowReactive", 2], {"article": 3}, {"content": 4}, html_body]);
        let (html, _) = body(&[(Kind::NuxtData, nuxt.to_string())]).unwrap();
        assert!(html.contains(&html_body));
        let js = format!(
            "window.__NUXT__=(function(a,b){{return {{data:[{{body:a}}]}}}}({},1));",
            serde_json::to_string(&html_body).unwrap()
        );
        assert_eq!(kind("<script>", &js), Some(Kind::State));
        let (html, _) = body(&[(Kind::State, js)]).unwrap();
        assert!(html.contains(&html_body));
    }
}
