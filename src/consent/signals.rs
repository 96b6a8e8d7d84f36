//! The AI-use signals of one page, as read from each place a publisher can
//! give them (robots.txt, headers, meta and link tags, tdmrep.json, an RSL
//! licence), and whether they reserve the crawl's use ([`reserves_ai_training`]).

use std::fmt;

use serde::Serialize;

use super::aipref::{self, Usage, UsageRules};
use super::content_signal::{self, ContentSignal};
use super::rsl::{Terms, Verdict};
use super::tdmrep::{TdmRule, tdm_value, tdmrep_match};
use super::terms::{AiUsage, Source};

/// One AI-use signal a publisher gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// A Content Signals entry: robots.txt's for our group, or the response header's.
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
    /// An RSL licence found at `found`: its terms for the page, `None` when
    /// the document could not be read or has no content element for the page.
    Rsl {
        url: String,
        found: Source,
        terms: Option<Terms>,
    },
}

impl Signal {
    /// Does this signal alone reserve AI training?
    pub fn reserves(&self) -> bool {
        self.reserves_use(AiUsage::TrainAi)
    }

    /// Does this signal alone reserve `usage`?
    pub(crate) fn reserves_use(&self, usage: AiUsage) -> bool {
        let training = usage == AiUsage::TrainAi;
        match self {
            Signal::ContentSignal(c) => {
                c.key == usage.content_signal_key() && c.allowed() == Some(false)
            }
            Signal::Directive { value, .. } => training && value == "noai",
            Signal::Tdm { reserved, .. } => training && *reserved,
            Signal::ContentUsage { prefs, .. } => aipref::reserves(prefs, usage),
            Signal::Rsl { terms, .. } => terms
                .as_ref()
                .and_then(|t| t.verdict(usage))
                .is_some_and(|v| v != Verdict::Free),
        }
    }
}

/// The short form kept in records: `robots.txt:ai-train=no`,
/// `content-signal:ai-train=no` (the header), `x-robots-tag:noai`,
/// `meta:noimageai`, `tdm-header:1`, `tdm-meta:0`,
/// `tdmrep.json:1;policy=https://...`, `content-usage:train-ai=n,search=y`,
/// `robots.txt:content-usage:train-ai=n`,
/// `rsl:https://.../license.xml;prohibits=ai-train;payment=free` (`;unread`
/// when the licence said nothing for the page).
impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signal::ContentSignal(c) => {
                let from = if c.source == Source::Header {
                    "content-signal"
                } else {
                    "robots.txt"
                };
                write!(f, "{from}:{}={}", c.key, c.value)
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
            Signal::Rsl { url, terms, .. } => match terms {
                Some(t) => write!(f, "rsl:{url};{}", t.label()),
                None => write!(f, "rsl:{url};unread"),
            },
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
    /// The use the signals are checked against (`crawl.ai_usage`).
    pub usage: AiUsage,
    /// RSL licences pointed to (absolute URLs, with where each was found),
    /// not yet read: `crawl::signals` fetches them and adds [`Signal::Rsl`].
    pub licenses: Vec<(Source, String)>,
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
    pub(crate) fn content_signals(&mut self, entries: &[ContentSignal]) {
        for c in entries {
            self.push(Signal::ContentSignal(c.clone()));
        }
    }

    /// Add the `Content-Signal` response header (all its field lines).
    pub(crate) fn content_signal_header(&mut self, values: &[&str]) {
        for v in values {
            for c in content_signal::parse(v, Source::Header) {
                self.push(Signal::ContentSignal(c));
            }
        }
    }

    /// Note an RSL licence pointed to at `found` (an absolute URL).
    pub(crate) fn license_ref(&mut self, found: Source, url: String) {
        if !self.licenses.iter().any(|(_, u)| *u == url) {
            self.licenses.push((found, url));
        }
    }

    /// Add what the RSL licence at `url` says about the page.
    pub fn rsl(&mut self, url: &str, found: Source, terms: Option<Terms>) {
        self.push(Signal::Rsl {
            url: url.to_string(),
            found,
            terms,
        });
    }

    /// The labels of the signals that reserve the crawl's use.
    pub fn reserving(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|s| s.reserves_use(self.usage))
            .map(Signal::to_string)
            .collect()
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
    pub(crate) fn tdm_headers(&mut self, reservation: Option<&str>, policy: Option<&str>) {
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
    pub(crate) fn content_usage_header(&mut self, values: &[&str]) {
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
    pub(crate) fn content_usage_robots(&mut self, rules: &UsageRules, path: &str) {
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

/// Does the publisher reserve the crawl's use (`signals.usage`, AI
/// training unless configured otherwise) of this page? Any one signal that
/// reserves it is enough: a `n` or `no` among several statements wins.
pub(crate) fn reserves_ai_training(signals: &Signals) -> bool {
    signals.seen.iter().any(|s| s.reserves_use(signals.usage))
}

fn is_ai_directive(d: &str) -> bool {
    d == "noai" || d == "noimageai"
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
pub(crate) fn x_robots_directives(values: &[String], agent: &str) -> Vec<String> {
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
