//! The AI-use signals of one page, as read from each place a publisher can
//! give them (robots.txt, headers, meta tags, tdmrep.json), and whether they
//! reserve AI training ([`reserves_ai_training`]).

use std::fmt;

use serde::Serialize;

use super::aipref::{self, Usage, UsageRules};
use super::robots::ContentSignal;
use super::tdmrep::{TdmRule, tdmrep_match};

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
pub(super) fn tdm_value(v: &str) -> Option<bool> {
    match v.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
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
