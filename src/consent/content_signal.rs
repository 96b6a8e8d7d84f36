//! Content Signals (the `Content-Signal` line of robots.txt, as managed
//! robots files write it, and the `Content-Signal` response header some
//! sites send): `search=yes, ai-train=no, ai-input=no`, with a `use` key
//! (`immediate`, `reference`, `full`) in managed files.
//!
//! Keys are read without case, with `_` taken for `-` (`AI_Train`); values
//! `yes`/`no` (also `y`/`n`, `true`/`false`, quoted or not); entries split on
//! `,` or `;`. `use` keeps its token. Anything else is dropped. A key given
//! twice keeps `no` if either says `no`.
//!
//! robots.txt: the lines of the group naming our token, else of the `*`
//! group; lines outside any group fill in the keys the group did not set.

use serde::Serialize;

use super::robots::robots_lines;
use super::terms::Source;

/// One `key=value` entry of a `Content-Signal` line or header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContentSignal {
    /// Lower-cased key: `search`, `ai-input`, `ai-train`, `use`, ...
    pub key: String,
    /// `yes` or `no`; for `use`, its token (`immediate`, `reference`, `full`).
    pub value: String,
    /// robots.txt or the response header.
    pub source: Source,
}

impl ContentSignal {
    pub fn new(key: &str, value: &str, source: Source) -> ContentSignal {
        ContentSignal {
            key: key.into(),
            value: value.into(),
            source,
        }
    }

    /// `Some(true)` for `yes`, `Some(false)` for `no`, `None` for `use`.
    pub fn allowed(&self) -> Option<bool> {
        match self.value.as_str() {
            "yes" => Some(true),
            "no" => Some(false),
            _ => None,
        }
    }
}

/// The Content-Signal entries of a robots.txt body that apply to `agent`
/// (a lower-cased product token): the entries of every group naming `agent`,
/// or else of every `*` group, then entries outside groups for keys the group
/// did not set.
pub(crate) fn content_signals(robots_txt: &[u8], agent: &str) -> Vec<ContentSignal> {
    let (group, global) = robots_lines(robots_txt, agent, "content-signal");
    let read = |lines: Vec<String>| {
        let mut out: Vec<ContentSignal> = Vec::new();
        for c in lines.iter().flat_map(|v| parse(v, Source::RobotsTxt)) {
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

fn merge(into: &mut Vec<ContentSignal>, c: ContentSignal) {
    match into.iter_mut().find(|o| o.key == c.key) {
        Some(o) if o.allowed().is_some() && c.allowed() == Some(false) => o.value = c.value,
        Some(_) => {}
        None => into.push(c),
    }
}

/// A robots.txt `Content-Signal` value: the well-formed entries.
pub fn parse_content_signal(value: &str) -> Vec<ContentSignal> {
    parse(value, Source::RobotsTxt)
}

/// A `Content-Signal` value read at `source`: the well-formed entries.
pub fn parse(value: &str, source: Source) -> Vec<ContentSignal> {
    let mut out = Vec::new();
    for part in value.split([',', ';']) {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let key = k.trim().to_ascii_lowercase().replace('_', "-");
        let well_formed =
            !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        let v = v.trim().trim_matches('"').trim().to_ascii_lowercase();
        let value = if key == "use" {
            match v.as_str() {
                "immediate" | "reference" | "full" => v,
                _ => continue,
            }
        } else {
            match v.as_str() {
                "yes" | "y" | "true" => "yes".to_string(),
                "no" | "n" | "false" => "no".to_string(),
                _ => continue,
            }
        };
        if well_formed {
            merge(&mut out, ContentSignal { key, value, source });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(key: &str, value: &str) -> ContentSignal {
        ContentSignal::new(key, value, Source::RobotsTxt)
    }

    #[test]
    fn values_in_every_spelling() {
        let table: [(&str, Vec<ContentSignal>); 11] = [
            // contentsignals.org's own example line.
            (
                "search=yes, ai-train=no",
                vec![cs("search", "yes"), cs("ai-train", "no")],
            ),
            // The managed robots.txt line, with the `use` key.
            (
                "search=yes, ai-input=yes, ai-train=no, use=reference",
                vec![
                    cs("search", "yes"),
                    cs("ai-input", "yes"),
                    cs("ai-train", "no"),
                    cs("use", "reference"),
                ],
            ),
            ("AI-Train = NO", vec![cs("ai-train", "no")]),
            (
                "ai_train=n; Search=Y",
                vec![cs("ai-train", "no"), cs("search", "yes")],
            ),
            (
                "ai-train=\"no\", search=true",
                vec![cs("ai-train", "no"), cs("search", "yes")],
            ),
            ("ai-train=maybe, search=yes", vec![cs("search", "yes")]),
            ("use=everything, use=full", vec![cs("use", "full")]),
            ("ai-train", vec![]),
            ("=no, bad key=no, ai-input=no", vec![cs("ai-input", "no")]),
            ("ai-train=yes, ai-train=no", vec![cs("ai-train", "no")]),
            ("", vec![]),
        ];
        for (value, want) in table {
            assert_eq!(parse_content_signal(value), want, "{value}");
        }
        let h = parse("ai-train=no", Source::Header);
        assert_eq!(h[0].source, Source::Header);
    }
}
