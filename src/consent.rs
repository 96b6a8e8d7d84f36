//! Publisher consent for AI use: what a site says about training AI on its
//! pages, and the one decision the crawl takes from it. Pure: callers hand in
//! the robots.txt body, response headers, page meta tags and the site's
//! `tdmrep.json`; nothing here does I/O.
//!
//! Signals read:
//! * robots.txt `Content-Signal:` lines (`search=yes, ai-train=no`), taken from
//!   the group for our product token, else the `*` group, as robots rules are;
//!   lines outside any group apply to everyone unless the group says otherwise.
//! * `noai` / `noimageai` in `X-Robots-Tag` (plain, or `agent: directive` for
//!   our token) and in `<meta name="robots">` / `<meta name="<our token>">`.
//! * TDMRep: the `tdm-reservation` / `tdm-policy` header and meta tag, and the
//!   rules of `/.well-known/tdmrep.json` (the most specific matching
//!   `location` wins).
//!
//! [`reserves_ai_training`] says whether any of them reserves AI training:
//! `ai-train=no`, `noai`, or a TDM reservation (`1`). `noimageai` is recorded
//! but reserves nothing we keep (we store text only), and neither do other
//! Content-Signal keys (`search`, `ai-input`). Where TDMRep sources disagree,
//! the reservation wins. Malformed values are ignored.
//!
//! * The IETF AI-preferences vocabulary ([`aipref`]): the `Content-Usage`
//!   header and robots.txt `Content-Usage` rules (`train-ai=n`). Each
//!   expression is one signal; it reserves AI training when `train-ai` or
//!   `train-genai` resolves to `n` within it (`bots=n` included). Expressions
//!   that are not valid Structured Fields are ignored and counted.

pub mod aipref;

use std::fmt;

use serde::Serialize;

pub use aipref::{Usage, UsageRules};

/// Where a signal was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// robots.txt.
    RobotsTxt,
    /// An HTTP response header.
    Header,
    /// An HTML `<meta>` tag.
    Meta,
    /// `/.well-known/tdmrep.json`.
    TdmRepJson,
}

/// One `key=yes|no` entry of a robots.txt `Content-Signal` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContentSignal {
    /// Lower-cased key: `search`, `ai-input`, `ai-train`, ...
    pub key: String,
    pub allowed: bool,
}

/// One AI-use signal a publisher gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// robots.txt `Content-Signal` entry for our group.
    ContentSignal(ContentSignal),
    /// `noai` or `noimageai`, from `X-Robots-Tag` ([`Source::Header`]) or a meta tag.
    Directive { source: Source, value: String },
    /// A TDMRep `tdm-reservation` value, with its `tdm-policy` when given.
    Tdm {
        source: Source,
        reserved: bool,
        policy: Option<String>,
    },
    /// An IETF AI-preferences expression: the `Content-Usage` header
    /// ([`Source::Header`]) or the robots.txt rule for the page ([`Source::RobotsTxt`]).
    ContentUsage { source: Source, prefs: Vec<Usage> },
}

impl Signal {
    /// Does this signal alone reserve AI training?
    pub fn reserves(&self) -> bool {
        match self {
            Signal::ContentSignal(c) => c.key == "ai-train" && !c.allowed,
            Signal::Directive { value, .. } => value == "noai",
            Signal::Tdm { reserved, .. } => *reserved,
            Signal::ContentUsage { prefs, .. } => aipref::reserves_training(prefs),
        }
    }
}

/// The short form kept in records: `robots.txt:ai-train=no`,
/// `x-robots-tag:noai`, `meta:noimageai`, `tdm-header:1`, `tdm-meta:0`,
/// `tdmrep.json:1;policy=https://...`, `content-usage:train-ai=n,search=y`,
/// `robots.txt:content-usage:train-ai=n`.
impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signal::ContentSignal(c) => {
                let v = if c.allowed { "yes" } else { "no" };
                write!(f, "robots.txt:{}={v}", c.key)
            }
            Signal::Directive { source, value } => {
                let from = if *source == Source::Header {
                    "x-robots-tag"
                } else {
                    "meta"
                };
                write!(f, "{from}:{value}")
            }
            Signal::Tdm {
                source,
                reserved,
                policy,
            } => {
                let from = match source {
                    Source::Header => "tdm-header",
                    Source::Meta => "tdm-meta",
                    Source::TdmRepJson | Source::RobotsTxt => "tdmrep.json",
                };
                write!(f, "{from}:{}", u8::from(*reserved))?;
                match policy {
                    Some(p) => write!(f, ";policy={p}"),
                    None => Ok(()),
                }
            }
            Signal::ContentUsage { source, prefs } => {
                let from = if *source == Source::RobotsTxt {
                    "robots.txt:"
                } else {
                    ""
                };
                write!(f, "{from}content-usage:{}", aipref::label(prefs))
            }
        }
    }
}

/// Every AI-use signal seen for one page, in the order read, without repeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Signals {
    pub seen: Vec<Signal>,
    /// `Content-Usage` header values that were not valid Structured Fields
    /// (ignored; robots.txt lines are counted in [`UsageRules::malformed`]).
    pub malformed: usize,
}

impl Signals {
    pub fn push(&mut self, s: Signal) {
        if !self.seen.contains(&s) {
            self.seen.push(s);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The short forms (see [`Signal`]'s `Display`), for records and logs.
    pub fn labels(&self) -> Vec<String> {
        self.seen.iter().map(Signal::to_string).collect()
    }

    /// Add robots.txt Content-Signal entries.
    pub fn content_signals(&mut self, entries: &[ContentSignal]) {
        for c in entries {
            self.push(Signal::ContentSignal(c.clone()));
        }
    }

    /// Add `X-Robots-Tag` header values that apply to `agent`.
    pub fn x_robots_tag(&mut self, values: &[String], agent: &str) {
        for d in x_robots_directives(values, agent) {
            if is_ai_directive(&d) {
                self.push(Signal::Directive {
                    source: Source::Header,
                    value: d,
                });
            }
        }
    }

    /// Add meta tags, given as (lower-cased name, content): `robots` and
    /// `agent` directives, `tdm-reservation` with `tdm-policy`.
    pub fn meta(&mut self, metas: &[(String, String)], agent: &str) {
        let mut policy = None;
        let mut reservation = None;
        for (name, content) in metas {
            let name = name.trim().to_ascii_lowercase();
            if name == "robots" || name == agent {
                for d in content.split([',', ' ']) {
                    let d = d.trim().to_ascii_lowercase();
                    if is_ai_directive(&d) {
                        self.push(Signal::Directive {
                            source: Source::Meta,
                            value: d,
                        });
                    }
                }
            } else if name == "tdm-reservation" {
                reservation = reservation.or(tdm_value(content));
            } else if name == "tdm-policy" && !content.trim().is_empty() {
                policy = policy.or(Some(content.trim().to_string()));
            }
        }
        if let Some(reserved) = reservation {
            self.push(Signal::Tdm {
                source: Source::Meta,
                reserved,
                policy,
            });
        }
    }

    /// Add the `tdm-reservation` / `tdm-policy` response headers.
    pub fn tdm_headers(&mut self, reservation: Option<&str>, policy: Option<&str>) {
        if let Some(reserved) = reservation.and_then(tdm_value) {
            self.push(Signal::Tdm {
                source: Source::Header,
                reserved,
                policy: policy
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string),
            });
        }
    }

    /// Add the `Content-Usage` response header (all its field lines, combined
    /// as RFC 9651 asks). A malformed value is counted, not recorded; one
    /// that states no known category adds nothing.
    pub fn content_usage_header(&mut self, values: &[&str]) {
        if values.is_empty() {
            return;
        }
        match aipref::parse_content_usage(&values.join(", ")) {
            Ok(prefs) if !prefs.is_empty() => self.push(Signal::ContentUsage {
                source: Source::Header,
                prefs,
            }),
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(value = %values.join(", "), error = %e, "Content-Usage header: malformed, ignored");
                self.malformed += 1;
            }
        }
    }

    /// Add the robots.txt `Content-Usage` rule that applies to `path` (path and query), if any.
    pub fn content_usage_robots(&mut self, rules: &UsageRules, path: &str) {
        if let Some(prefs) = rules.for_path(path).filter(|p| !p.is_empty()) {
            self.push(Signal::ContentUsage {
                source: Source::RobotsTxt,
                prefs,
            });
        }
    }

    /// Add the `tdmrep.json` rule that applies to `path` (path and query), if any.
    pub fn tdmrep(&mut self, rules: &[TdmRule], path: &str) {
        if let Some(rule) = tdmrep_match(rules, path) {
            self.push(Signal::Tdm {
                source: Source::TdmRepJson,
                reserved: rule.reserved,
                policy: rule.policy.clone(),
            });
        }
    }
}

/// Does the publisher reserve AI training on this page?
pub fn reserves_ai_training(signals: &Signals) -> bool {
    signals.seen.iter().any(Signal::reserves)
}

fn is_ai_directive(d: &str) -> bool {
    d == "noai" || d == "noimageai"
}

/// A TDMRep `tdm-reservation` value: `1` reserved, `0` not; anything else is ignored.
fn tdm_value(v: &str) -> Option<bool> {
    match v.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// The product token of a `User-agent:` value (as [`crate::net::agent_token`]).
fn token(v: &str) -> String {
    let t: String = v
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == '*')
        .collect();
    t.to_ascii_lowercase()
}

/// The Content-Signal entries of a robots.txt body that apply to `agent`
/// (a lower-cased product token): the entries of every group naming `agent`,
/// or else of every `*` group, then entries outside groups for keys the group
/// did not set. A key given twice keeps `no` if either says `no`.
pub fn content_signals(robots_txt: &[u8], agent: &str) -> Vec<ContentSignal> {
    let (group, global) = robots_lines(robots_txt, agent, "content-signal");
    let read = |lines: Vec<String>| {
        let mut out: Vec<ContentSignal> = Vec::new();
        for c in lines.iter().flat_map(|v| parse_content_signal(v)) {
            merge(&mut out, c);
        }
        out
    };
    let mut out = read(group);
    for c in read(global) {
        if !out.iter().any(|o| o.key == c.key) {
            out.push(c);
        }
    }
    out
}

/// The values of a robots.txt body's `field` lines (lower-case name) that
/// apply to `agent`: those of every group naming `agent`, or else of every
/// `*` group (a group that names us without such lines gives none); and,
/// apart, those outside any group. Comments are cut.
fn robots_lines(robots_txt: &[u8], agent: &str, field: &str) -> (Vec<String>, Vec<String>) {
    struct Group {
        agents: Vec<String>,
        lines: Vec<String>,
    }
    let text = String::from_utf8_lossy(robots_txt);
    let mut groups: Vec<Group> = Vec::new();
    let mut global: Vec<String> = Vec::new();
    let mut in_agents = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key == "user-agent" {
            if !in_agents {
                groups.push(Group {
                    agents: Vec::new(),
                    lines: Vec::new(),
                });
            }
            in_agents = true;
            if let Some(g) = groups.last_mut() {
                g.agents.push(token(value));
            }
            continue;
        }
        if key == "sitemap" {
            continue; // not a group member; does not end the agent lines either way
        }
        in_agents = false;
        if key == field {
            match groups.last_mut() {
                Some(g) => g.lines.push(value.to_string()),
                None => global.push(value.to_string()),
            }
        }
    }
    let agent = agent.to_ascii_lowercase();
    let pick = |name: &str| -> Option<Vec<String>> {
        let mut named = groups
            .iter()
            .filter(|g| g.agents.iter().any(|a| a == name))
            .peekable();
        named.peek()?;
        Some(named.flat_map(|g| g.lines.iter().cloned()).collect())
    };
    let group = pick(&agent).or_else(|| pick("*")).unwrap_or_default();
    (group, global)
}

fn merge(into: &mut Vec<ContentSignal>, c: ContentSignal) {
    match into.iter_mut().find(|o| o.key == c.key) {
        Some(o) => o.allowed &= c.allowed,
        None => into.push(c),
    }
}

/// `search=yes, ai-train=no`: the well-formed entries; others are dropped.
pub fn parse_content_signal(value: &str) -> Vec<ContentSignal> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let key = k.trim().to_ascii_lowercase();
        let well_formed = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        let allowed = match v.trim().to_ascii_lowercase().as_str() {
            "yes" => true,
            "no" => false,
            _ => continue,
        };
        if well_formed {
            merge(&mut out, ContentSignal { key, allowed });
        }
    }
    out
}

/// Robots directives with a value after a colon: not user-agent prefixes.
const VALUED: &[&str] = &[
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

/// The lower-cased `X-Robots-Tag` directives that apply to `agent`: those
/// without an agent prefix, and those after `agent:` (`googlebot: noindex,
/// nofollow` gives both to googlebot, until the next prefix).
pub fn x_robots_directives(values: &[String], agent: &str) -> Vec<String> {
    let agent = agent.to_ascii_lowercase();
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let mut target: Option<String> = None;
        for piece in value.split(',') {
            let mut piece = piece.trim();
            if let Some((name, rest)) = piece.split_once(':') {
                let name = name.trim().to_ascii_lowercase();
                let is_agent = !name.is_empty()
                    && !VALUED.contains(&name.as_str())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
                if is_agent {
                    target = Some(name);
                    piece = rest.trim();
                }
            }
            let d = piece.to_ascii_lowercase();
            if d.is_empty() || target.as_ref().is_some_and(|t| *t != agent) {
                continue;
            }
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// One rule of `tdmrep.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TdmRule {
    /// Path pattern: a prefix, with `*` for any run of characters and a final `$` to anchor.
    pub location: String,
    pub reserved: bool,
    pub policy: Option<String>,
}

/// Parse `tdmrep.json`: an array of `{location, tdm-reservation, tdm-policy}`.
/// Entries without a location or a `0`/`1` reservation are skipped; `Err` when
/// the document is not a JSON array.
pub fn parse_tdmrep(body: &[u8]) -> Result<Vec<TdmRule>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let items = value
        .as_array()
        .ok_or_else(|| "not a JSON array".to_string())?;
    let mut rules = Vec::new();
    for item in items {
        let Some(location) = item.get("location").and_then(|l| l.as_str()) else {
            continue;
        };
        let reserved = match item.get("tdm-reservation") {
            Some(serde_json::Value::Number(n)) => match n.as_u64() {
                Some(1) => true,
                Some(0) => false,
                _ => continue,
            },
            Some(serde_json::Value::String(s)) => match tdm_value(s) {
                Some(r) => r,
                None => continue,
            },
            _ => continue,
        };
        let policy = item
            .get("tdm-policy")
            .and_then(|p| p.as_str())
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        rules.push(TdmRule {
            location: location.trim().to_string(),
            reserved,
            policy,
        });
    }
    Ok(rules)
}

/// The rule for `path` (path and query): the longest matching location; the first on a tie.
pub fn tdmrep_match<'a>(rules: &'a [TdmRule], path: &str) -> Option<&'a TdmRule> {
    let mut best: Option<&TdmRule> = None;
    for r in rules {
        if location_matches(&r.location, path)
            && best.is_none_or(|b| r.location.len() > b.location.len())
        {
            best = Some(r);
        }
    }
    best
}

/// Robots-style pattern match: `*` any run, a final `$` anchors, otherwise a prefix.
fn location_matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut pos = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !path.starts_with(part) {
                return false;
            }
            pos = part.len();
            continue;
        }
        let last = i == parts.len() - 1;
        if last && anchored {
            return path.len() >= pos + part.len() && path.ends_with(part);
        }
        match path[pos..].find(part) {
            Some(at) => pos += at + part.len(),
            None => return false,
        }
    }
    !anchored || pos == path.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(key: &str, allowed: bool) -> ContentSignal {
        ContentSignal {
            key: key.into(),
            allowed,
        }
    }

    #[test]
    fn content_signal_values() {
        let table: [(&str, Vec<ContentSignal>); 7] = [
            (
                "search=yes, ai-train=no",
                vec![cs("search", true), cs("ai-train", false)],
            ),
            ("AI-Train = NO", vec![cs("ai-train", false)]),
            ("ai-train=maybe, search=yes", vec![cs("search", true)]),
            ("ai-train", vec![]),
            ("=no, bad key=no, ai-input=no", vec![cs("ai-input", false)]),
            ("ai-train=yes, ai-train=no", vec![cs("ai-train", false)]),
            ("", vec![]),
        ];
        for (value, want) in table {
            assert_eq!(parse_content_signal(value), want, "{value}");
        }
    }

    #[test]
    fn content_signal_groups() {
        let txt = b"Content-Signal: search=yes\n\
            User-agent: *\nContent-Signal: ai-train=no\nDisallow: /private\n\n\
            User-agent: otherbot\nUser-agent: Scraper\nContent-Signal: ai-train=yes # ok for us\nAllow: /\n\n\
            User-agent: thirdbot\nContent-signal: ai-input=no\nContent-Signal: ai-train=no\n";
        let table: [(&str, Vec<ContentSignal>); 4] = [
            // Our own group wins over `*`; the global line fills in.
            ("scraper", vec![cs("ai-train", true), cs("search", true)]),
            ("otherbot", vec![cs("ai-train", true), cs("search", true)]),
            (
                "thirdbot",
                vec![
                    cs("ai-input", false),
                    cs("ai-train", false),
                    cs("search", true),
                ],
            ),
            // Nobody named: the `*` group.
            ("newbot", vec![cs("ai-train", false), cs("search", true)]),
        ];
        for (agent, want) in table {
            assert_eq!(content_signals(txt, agent), want, "{agent}");
        }
        // No group for us and no `*`: only lines outside groups.
        let txt = b"User-agent: a\nContent-Signal: ai-train=no\n";
        assert_eq!(content_signals(txt, "scraper"), vec![]);
        // A group that names us without signals says nothing, even if `*` does.
        let txt = b"User-agent: *\nContent-Signal: ai-train=no\n\nUser-agent: scraper\nDisallow:\n";
        assert_eq!(content_signals(txt, "scraper"), vec![]);
        assert_eq!(content_signals(b"\xff\xfe garbage:::\n", "scraper"), vec![]);
    }

    #[test]
    fn x_robots_tag_forms() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let table: [(Vec<String>, Vec<&str>); 6] = [
            (v(&["noai, noimageai"]), vec!["noai", "noimageai"]),
            (v(&["NoAI"]), vec!["noai"]),
            (
                v(&["googlebot: noai", "scraper: noimageai"]),
                vec!["noimageai"],
            ),
            (
                v(&["noindex, otherbot: noai, nofollow, scraper: noai"]),
                vec!["noindex", "noai"],
            ),
            (
                v(&["unavailable_after: 25 Jun 2030 15:00:00 PST"]),
                vec!["unavailable_after: 25 jun 2030 15:00:00 pst"],
            ),
            (v(&["", " , ,"]), vec![]),
        ];
        for (values, want) in table {
            assert_eq!(x_robots_directives(&values, "scraper"), want, "{values:?}");
        }
        let mut s = Signals::default();
        s.x_robots_tag(&v(&["otherbot: noai", "noimageai"]), "scraper");
        assert_eq!(s.labels(), vec!["x-robots-tag:noimageai"]);
        assert!(!reserves_ai_training(&s));
        s.x_robots_tag(&v(&["Scraper: noai"]), "scraper");
        assert!(reserves_ai_training(&s));
    }

    #[test]
    fn meta_tags() {
        let m = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        type Case = (Vec<(String, String)>, Vec<&'static str>, bool);
        let table: [Case; 7] = [
            (m(&[("robots", "noindex, noai")]), vec!["meta:noai"], true),
            (
                m(&[("scraper", "noimageai noai")]),
                vec!["meta:noimageai", "meta:noai"],
                true,
            ),
            (m(&[("otherbot", "noai")]), vec![], false),
            (m(&[("tdm-reservation", "1")]), vec!["tdm-meta:1"], true),
            (
                m(&[
                    ("tdm-policy", "https://p.test/policy.json"),
                    ("tdm-reservation", " 1 "),
                ]),
                vec!["tdm-meta:1;policy=https://p.test/policy.json"],
                true,
            ),
            (m(&[("tdm-reservation", "0")]), vec!["tdm-meta:0"], false),
            (m(&[("tdm-reservation", "yes please")]), vec![], false),
        ];
        for (metas, labels, reserved) in table {
            let mut s = Signals::default();
            s.meta(&metas, "scraper");
            assert_eq!(s.labels(), labels, "{metas:?}");
            assert_eq!(reserves_ai_training(&s), reserved, "{metas:?}");
        }
    }

    #[test]
    fn tdm_headers() {
        let table = [
            (Some("1"), None, vec!["tdm-header:1"], true),
            (
                Some("1"),
                Some("https://p.test/x"),
                vec!["tdm-header:1;policy=https://p.test/x"],
                true,
            ),
            (Some("0"), None, vec!["tdm-header:0"], false),
            (Some("true"), None, vec![], false),
            (None, Some("https://p.test/x"), vec![], false),
        ];
        for (res, pol, labels, reserved) in table {
            let mut s = Signals::default();
            s.tdm_headers(res, pol);
            assert_eq!(s.labels(), labels, "{res:?}");
            assert_eq!(reserves_ai_training(&s), reserved);
        }
    }

    #[test]
    fn tdmrep_file() {
        let body = br#"[
            {"location": "/", "tdm-reservation": 1, "tdm-policy": "https://p.test/policy.json"},
            {"location": "/open/*", "tdm-reservation": 0},
            {"location": "/open/*.pdf$", "tdm-reservation": "1"},
            {"location": "/odd", "tdm-reservation": 2},
            {"tdm-reservation": 1},
            "not an object"
        ]"#;
        let rules = parse_tdmrep(body).unwrap();
        assert_eq!(rules.len(), 3);
        let table = [
            ("/2024/05/story", Some(true)),
            ("/open/page", Some(false)),
            ("/open/doc.pdf", Some(true)),
            ("/open/doc.pdf?x=1", Some(false)),
            ("/odd", Some(true)),
        ];
        for (path, want) in table {
            assert_eq!(
                tdmrep_match(&rules, path).map(|r| r.reserved),
                want,
                "{path}"
            );
        }
        let only_blog =
            parse_tdmrep(br#"[{"location": "/blog/*", "tdm-reservation": 1}]"#).unwrap();
        assert!(tdmrep_match(&only_blog, "/news/x").is_none());
        assert!(tdmrep_match(&only_blog, "/blog/x").is_some());
        assert!(parse_tdmrep(b"{\"location\": \"/\"}").is_err());
        assert!(parse_tdmrep(b"<html>").is_err());
        assert_eq!(parse_tdmrep(b"[]").unwrap(), vec![]);

        let mut s = Signals::default();
        s.tdmrep(&rules, "/2024/05/story");
        assert_eq!(
            s.labels(),
            vec!["tdmrep.json:1;policy=https://p.test/policy.json"]
        );
        assert!(reserves_ai_training(&s));
    }

    #[test]
    fn patterns() {
        let table = [
            ("/", "/anything", true),
            ("*", "/anything", true),
            ("/a*c", "/abc", true),
            ("/a*c", "/ab", false),
            ("/a$", "/a", true),
            ("/a$", "/ab", false),
            ("/*/x$", "/y/x", true),
            ("/*/x$", "/y/x/z", false),
            ("/blog", "/blogpost", true),
        ];
        for (p, path, want) in table {
            assert_eq!(location_matches(p, path), want, "{p} {path}");
        }
    }

    #[test]
    fn content_usage_signals() {
        let mut s = Signals::default();
        s.content_usage_header(&["train-ai=n", "search=y"]);
        assert_eq!(s.labels(), vec!["content-usage:train-ai=n,search=y"]);
        assert!(reserves_ai_training(&s));
        // Malformed or empty header values: counted or skipped, never recorded.
        let mut s = Signals::default();
        s.content_usage_header(&["Train-AI=n"]);
        s.content_usage_header(&["foo=n"]);
        s.content_usage_header(&[]);
        assert_eq!((s.labels().len(), s.malformed), (0, 1));
        assert!(!reserves_ai_training(&s));
        // robots.txt: the rule for the page's path.
        let rules = UsageRules::parse(
            b"User-agent: *\nContent-Usage: search=y\nContent-Usage: /news/ train-genai=n\n",
            "scraper",
        );
        let mut s = Signals::default();
        s.content_usage_robots(&rules, "/about");
        assert_eq!(s.labels(), vec!["robots.txt:content-usage:search=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/news/story");
        assert!(reserves_ai_training(&s));
        // Expressions resolve one by one: the header's `train-ai=y` does not
        // lift a `bots=n` rule of robots.txt; `n` wins across sources.
        let rules = UsageRules::parse(b"User-agent: *\nContent-Usage: bots=n\n", "scraper");
        let mut s = Signals::default();
        s.content_usage_header(&["train-ai=y"]);
        assert!(!reserves_ai_training(&s));
        s.content_usage_robots(&rules, "/x");
        assert!(reserves_ai_training(&s));
        assert_eq!(
            s.labels(),
            vec![
                "content-usage:train-ai=y",
                "robots.txt:content-usage:bots=n"
            ]
        );
    }

    #[test]
    fn decision_table() {
        let table = [
            (vec![Signal::ContentSignal(cs("ai-train", false))], true),
            (vec![Signal::ContentSignal(cs("ai-train", true))], false),
            (vec![Signal::ContentSignal(cs("ai-input", false))], false),
            (vec![Signal::ContentSignal(cs("search", false))], false),
            (
                vec![Signal::Directive {
                    source: Source::Meta,
                    value: "noimageai".into(),
                }],
                false,
            ),
            // TDMRep sources that disagree: the reservation wins.
            (
                vec![
                    Signal::Tdm {
                        source: Source::TdmRepJson,
                        reserved: false,
                        policy: None,
                    },
                    Signal::Tdm {
                        source: Source::Header,
                        reserved: true,
                        policy: None,
                    },
                ],
                true,
            ),
            (vec![], false),
        ];
        for (seen, want) in table {
            let s = Signals {
                seen,
                ..Signals::default()
            };
            assert_eq!(reserves_ai_training(&s), want, "{:?}", s.labels());
        }
    }
}
