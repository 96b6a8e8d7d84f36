//! The IETF AI-preferences vocabulary (draft-ietf-aipref-vocab-08) where
//! the attachment draft (draft-ietf-aipref-attach-05) puts it: the
//! `Content-Usage` response header and robots.txt `Content-Usage` rules.
//! Pure.
//!
//! An expression is a Structured Fields Dictionary (RFC 9651):
//! `train-ai=n, search=y`. The vocabulary has two labels, `train-ai` (AI
//! training) and `search` (building a search index), which do not nest
//! (nesting was removed in the August 2026 revision); values are the tokens
//! `y` (allowed) or `n` (not allowed); unknown keys, other values and all
//! parameters are ignored, as the vocabulary asks. Labels of earlier
//! revisions (`bots`, `train-genai`, `ai-use`) are kept as seen, so records
//! say what the publisher wrote, but they state nothing: `bots=n` does not
//! reserve training. A value that is not a valid Dictionary (`Train-AI=n`,
//! `train-ai=n,`, `train ai=n`) is ignored whole and counted as malformed.
//! Where several statements apply (a header and a robots.txt rule), any `n`
//! for a label wins: [`super::Signals`] keeps each as a signal of its own.
//!
//! robots.txt: `Content-Usage: [path] expression` lines inside the group
//! that applies to us (as robots rules are chosen); lines outside any group
//! state nothing (they are counted in [`UsageRules::outside`]). The path is a
//! robots pattern (`*`, final `$`), `/` when omitted; the rule with the
//! longest matching path applies, and rules with the same path are combined
//! (`n` wins). A rule applies only to paths the group lets us crawl: the
//! caller asks [`UsageRules::for_path`] only for those.

use serde::Serialize;

use super::terms::AiUsage;

/// The labels of draft-ietf-aipref-vocab-08.
pub(crate) const LABELS: [&str; 2] = ["train-ai", "search"];

/// Labels of earlier revisions: recorded, never acted on.
pub(crate) const OLD_LABELS: [&str; 3] = ["bots", "train-genai", "ai-use"];

/// One stated preference: `train-ai=n` is `{category: "train-ai", allowed: false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub category: String,
    pub allowed: bool,
}

/// A Content-Usage value: the labels it states (current and earlier), in
/// order; `Err` when it is not a Structured Fields Dictionary.
pub(crate) fn parse_content_usage(value: &str) -> Result<Vec<Usage>, String> {
    let members = sf::dictionary(value)?;
    let mut out: Vec<Usage> = Vec::new();
    for (key, token) in members {
        if !LABELS.contains(&key.as_str()) && !OLD_LABELS.contains(&key.as_str()) {
            continue;
        }
        let allowed = match token.as_deref() {
            Some("y") => true,
            Some("n") => false,
            _ => continue,
        };
        // A key given twice: the last value stands (RFC 9651 4.2.2).
        out.retain(|u| u.category != key);
        out.push(Usage {
            category: key,
            allowed,
        });
    }
    Ok(out)
}

/// The preference an expression states for a current `label`; `None` when
/// unstated (labels do not nest, and old labels state nothing).
pub fn resolve(prefs: &[Usage], label: &str) -> Option<bool> {
    if !LABELS.contains(&label) {
        return None;
    }
    prefs
        .iter()
        .find(|u| u.category == label)
        .map(|u| u.allowed)
}

/// Does this expression reserve `usage` (its label `n`)?
pub fn reserves(prefs: &[Usage], usage: AiUsage) -> bool {
    resolve(prefs, usage.aipref_label()) == Some(false)
}

/// Does this expression reserve AI training (`train-ai=n`)?
pub fn reserves_training(prefs: &[Usage]) -> bool {
    reserves(prefs, AiUsage::TrainAi)
}

/// `train-ai=n,search=y`: the form records keep.
pub fn label(prefs: &[Usage]) -> String {
    prefs
        .iter()
        .map(|u| format!("{}={}", u.category, if u.allowed { "y" } else { "n" }))
        .collect::<Vec<_>>()
        .join(",")
}

/// One robots.txt `Content-Usage` rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageRule {
    /// Robots path pattern (`/` when the line gave none).
    pub path: String,
    pub(crate) prefs: Vec<Usage>,
}

/// The `Content-Usage` rules of a robots.txt that apply to one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UsageRules {
    /// Rules of the group for our agent (or `*`).
    pub group: Vec<UsageRule>,
    /// `Content-Usage` lines outside any group: ignored, as the attachment
    /// draft places the rule inside a group.
    pub outside: usize,
    /// Lines that could not be read (no expression, or not a Dictionary).
    pub malformed: usize,
}

impl UsageRules {
    /// Read the `Content-Usage` lines of a robots.txt body for `agent`.
    pub fn parse(robots_txt: &[u8], agent: &str) -> UsageRules {
        let (group, global) = super::robots::robots_lines(robots_txt, agent, "content-usage");
        let mut malformed = 0;
        let group = group
            .iter()
            .filter_map(|l| {
                let rule = parse_rule(l);
                malformed += usize::from(rule.is_none());
                rule
            })
            .collect();
        UsageRules {
            group,
            outside: global.len(),
            malformed,
        }
    }

    /// The preferences for `path` (path and query), a path the group lets
    /// us crawl: the longest matching rule of the group, rules with that
    /// same path combined. `None` when no rule matches.
    pub(crate) fn for_path(&self, path: &str) -> Option<Vec<Usage>> {
        longest_match(&self.group, path)
    }

    pub fn is_empty(&self) -> bool {
        self.group.is_empty()
    }
}

/// `[path] expression`; `None` when the expression is missing or malformed.
fn parse_rule(value: &str) -> Option<UsageRule> {
    let value = value.trim();
    let (path, expr) = if value.starts_with('/') || value.starts_with('*') {
        match value.split_once(char::is_whitespace) {
            Some((p, e)) => (p, e.trim()),
            None => (value, ""),
        }
    } else {
        ("/", value)
    };
    if expr.is_empty() {
        return None;
    }
    let prefs = parse_content_usage(expr).ok()?;
    Some(UsageRule {
        path: path.to_string(),
        prefs,
    })
}

fn longest_match(rules: &[UsageRule], path: &str) -> Option<Vec<Usage>> {
    let best = rules
        .iter()
        .filter(|r| super::robots::location_matches(&r.path, path))
        .map(|r| r.path.len())
        .max()?;
    let mut out: Vec<Usage> = Vec::new();
    for r in rules
        .iter()
        .filter(|r| r.path.len() == best && super::robots::location_matches(&r.path, path))
    {
        for u in &r.prefs {
            match out.iter_mut().find(|o| o.category == u.category) {
                Some(o) => o.allowed &= u.allowed,
                None => out.push(u.clone()),
            }
        }
    }
    Some(out)
}

/// Just enough of RFC 9651 to read a Dictionary: every member's key, with
/// its value when that is a Token (other items and inner lists are checked
/// and skipped; parameters are skipped).
mod sf {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
    }

    type Member = (String, Option<String>);

    pub(crate) fn dictionary(input: &str) -> Result<Vec<Member>, String> {
        let mut p = P {
            s: input.as_bytes(),
            i: 0,
        };
        p.skip(|c| c == b' ' || c == b'\t');
        let mut out: Vec<Member> = Vec::new();
        let end = input.trim_end_matches([' ', '\t']).len();
        p.s = &p.s[..end.max(p.i)];
        if p.done() {
            return Ok(out);
        }
        loop {
            let key = p.key()?;
            let token = if p.eat(b'=') {
                if p.peek() == Some(b'(') {
                    p.inner_list()?;
                    None
                } else {
                    p.bare_item()?
                }
            } else {
                None
            };
            p.params()?;
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(m) => m.1 = token,
                None => out.push((key, token)),
            }
            p.skip(|c| c == b' ' || c == b'\t');
            if p.done() {
                return Ok(out);
            }
            if !p.eat(b',') {
                return Err(p.error("expected `,` between members"));
            }
            p.skip(|c| c == b' ' || c == b'\t');
            if p.done() {
                return Err(p.error("a trailing `,`"));
            }
        }
    }

    impl P<'_> {
        fn peek(&self) -> Option<u8> {
            self.s.get(self.i).copied()
        }
        fn done(&self) -> bool {
            self.i >= self.s.len()
        }
        fn eat(&mut self, c: u8) -> bool {
            let hit = self.peek() == Some(c);
            self.i += usize::from(hit);
            hit
        }
        fn skip(&mut self, f: impl Fn(u8) -> bool) -> usize {
            let start = self.i;
            while self.peek().is_some_and(&f) {
                self.i += 1;
            }
            self.i - start
        }
        fn error(&self, what: &str) -> String {
            format!("{what} at byte {}", self.i)
        }

        fn key(&mut self) -> Result<String, String> {
            let start = self.i;
            match self.peek() {
                Some(c) if c.is_ascii_lowercase() || c == b'*' => {}
                _ => return Err(self.error("expected a key (lower-case letter or `*`)")),
            }
            self.skip(|c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || matches!(c, b'_' | b'-' | b'.' | b'*')
            });
            Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
        }

        fn params(&mut self) -> Result<(), String> {
            while self.eat(b';') {
                self.skip(|c| c == b' ');
                self.key()?;
                if self.eat(b'=') {
                    self.bare_item()?;
                }
            }
            Ok(())
        }

        fn inner_list(&mut self) -> Result<(), String> {
            self.eat(b'(');
            loop {
                self.skip(|c| c == b' ');
                if self.eat(b')') {
                    return self.params();
                }
                if self.done() {
                    return Err(self.error("an unclosed inner list"));
                }
                self.bare_item()?;
                self.params()?;
                match self.peek() {
                    Some(b' ') | Some(b')') => {}
                    _ => return Err(self.error("expected ` ` or `)` in an inner list")),
                }
            }
        }

        /// A bare item; `Some(token)` when it is a Token.
        fn bare_item(&mut self) -> Result<Option<String>, String> {
            let start = self.i;
            match self.peek() {
                Some(c) if c == b'-' || c.is_ascii_digit() => {
                    self.eat(b'-');
                    let digits = self.skip(|c| c.is_ascii_digit() || c == b'.');
                    if digits == 0 || digits > 20 {
                        return Err(self.error("a bad number"));
                    }
                    Ok(None)
                }
                Some(b'"') => self.string().map(|_| None),
                Some(b'%') => {
                    self.i += 1;
                    if self.peek() != Some(b'"') {
                        return Err(self.error("a bad display string"));
                    }
                    self.string().map(|_| None)
                }
                Some(b':') => {
                    self.i += 1;
                    self.skip(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
                    if !self.eat(b':') {
                        return Err(self.error("an unclosed byte sequence"));
                    }
                    Ok(None)
                }
                Some(b'?') => {
                    self.i += 1;
                    if !(self.eat(b'0') || self.eat(b'1')) {
                        return Err(self.error("a bad boolean"));
                    }
                    Ok(None)
                }
                Some(b'@') => {
                    self.i += 1;
                    self.eat(b'-');
                    if self.skip(|c| c.is_ascii_digit()) == 0 {
                        return Err(self.error("a bad date"));
                    }
                    Ok(None)
                }
                Some(c) if c.is_ascii_alphabetic() || c == b'*' => {
                    self.skip(|c| is_tchar(c) || c == b':' || c == b'/');
                    Ok(Some(
                        String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
                    ))
                }
                _ => Err(self.error("expected a value")),
            }
        }

        fn string(&mut self) -> Result<(), String> {
            self.i += 1; // the opening quote
            loop {
                match self.peek() {
                    None => return Err(self.error("an unclosed string")),
                    Some(b'"') => {
                        self.i += 1;
                        return Ok(());
                    }
                    Some(b'\\') => {
                        self.i += 1;
                        if !matches!(self.peek(), Some(b'"' | b'\\')) {
                            return Err(self.error("a bad escape in a string"));
                        }
                        self.i += 1;
                    }
                    Some(c) if (0x20..0x7f).contains(&c) => self.i += 1,
                    Some(_) => return Err(self.error("a control or non-ASCII byte in a string")),
                }
            }
        }
    }

    fn is_tchar(c: u8) -> bool {
        c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(category: &str, allowed: bool) -> Usage {
        Usage {
            category: category.into(),
            allowed,
        }
    }

    #[test]
    fn expressions() {
        let table: [(&str, Result<Vec<Usage>, ()>); 14] = [
            ("train-ai=n", Ok(vec![u("train-ai", false)])),
            (
                "train-ai=n, search=y",
                Ok(vec![u("train-ai", false), u("search", true)]),
            ),
            (
                "  bots=y,train-genai=n ,ai-use=n  ",
                Ok(vec![
                    u("bots", true),
                    u("train-genai", false),
                    u("ai-use", false),
                ]),
            ),
            // Parameters and unknown keys are ignored; the last of a repeated key stands.
            (
                "train-ai=n;exp=1, foo=n, train-ai=y",
                Ok(vec![u("train-ai", true)]),
            ),
            // Other values are not preferences, but the field is well formed.
            (
                "train-ai=\"n\", search=?0, bots, x=(a b);q=1, y=:AQID:",
                Ok(vec![]),
            ),
            ("train-ai=yes", Ok(vec![])),
            ("", Ok(vec![])),
            // Malformed: ignored whole.
            ("Train-AI=n", Err(())),
            ("train-ai=n,", Err(())),
            ("train ai=n", Err(())),
            ("train-ai=n search=y", Err(())),
            ("train-ai=\"n", Err(())),
            ("=n", Err(())),
            ("train-ai=n; ", Err(())),
        ];
        for (value, want) in table {
            assert_eq!(
                parse_content_usage(value).map_err(|_| ()),
                want,
                "{value:?}"
            );
        }
        // Arbitrary bytes never panic.
        for s in [
            "\u{feff}train-ai=n",
            "x=(",
            "x=%\"",
            "x=:",
            "x=?",
            "x=@",
            "x=-",
            "*=*",
        ] {
            let _ = parse_content_usage(s);
        }
    }

    #[test]
    fn two_labels_that_do_not_nest() {
        // draft-ietf-aipref-vocab-08: only `train-ai` and `search` state
        // anything; the labels of earlier revisions are kept but say nothing.
        let table: [(Vec<Usage>, bool, bool); 8] = [
            (vec![u("train-ai", false)], true, false),
            (vec![u("search", false)], false, true),
            (vec![u("train-genai", false)], false, false),
            (vec![u("bots", false)], false, false),
            (vec![u("ai-use", false)], false, false),
            (vec![u("bots", false), u("train-ai", true)], false, false),
            (vec![u("train-ai", false), u("search", true)], true, false),
            (vec![], false, false),
        ];
        for (prefs, train, search) in table {
            assert_eq!(reserves_training(&prefs), train, "{}", label(&prefs));
            assert_eq!(
                reserves(&prefs, AiUsage::Search),
                search,
                "{}",
                label(&prefs)
            );
        }
        assert_eq!(resolve(&[u("bots", false)], "bots"), None);
        assert_eq!(resolve(&[], "train-ai"), None);
        // The vocabulary draft's own example, `train-ai=n, search=y`.
        let prefs = parse_content_usage("train-ai=n, search=y").unwrap();
        assert_eq!(resolve(&prefs, "search"), Some(true));
        assert_eq!(label(&prefs), "train-ai=n,search=y");
        // Old labels are parsed and recorded as written.
        let prefs = parse_content_usage("bots=n, train-genai=n").unwrap();
        assert_eq!(label(&prefs), "bots=n,train-genai=n");
        assert!(!reserves_training(&prefs));
    }

    #[test]
    fn robots_rules_inside_groups_only() {
        // The attachment draft's example: a rule inside the `*` group.
        let txt = b"Content-Usage: train-ai=n\n\
            User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n\
            Content-Usage: /open/ search=n\nContent-Usage: /odd/ Train-AI=n\nContent-Usage: /empty/\n\n\
            User-agent: scraper\nDisallow: /private\nContent-Usage: /news/*.html$ train-ai=n\n";
        let ours = UsageRules::parse(txt, "scraper");
        assert_eq!((ours.malformed, ours.outside), (0, 1));
        assert_eq!(ours.group.len(), 1);
        let table = [
            ("/news/a.html", Some(vec![u("train-ai", false)])),
            // Our group has no rule for it; the line outside groups states nothing.
            ("/news/a.html?x=1", None),
            ("/", None),
        ];
        for (path, want) in table {
            assert_eq!(ours.for_path(path), want, "{path}");
        }

        let star = UsageRules::parse(txt, "otherbot");
        assert_eq!(star.malformed, 2, "{star:?}");
        let table = [
            ("/story", Some(vec![u("train-ai", false)])),
            // Longest path wins; the two `/open/` rules combine.
            (
                "/open/page",
                Some(vec![u("train-ai", true), u("search", false)]),
            ),
            ("/odd/x", Some(vec![u("train-ai", false)])),
        ];
        for (path, want) in table {
            assert_eq!(star.for_path(path), want, "{path}");
        }
        assert!(UsageRules::parse(b"User-agent: *\nDisallow: /\n", "scraper").is_empty());
        // Only outside a group: nothing applies.
        let outside = UsageRules::parse(b"Content-Usage: train-ai=n\n", "scraper");
        assert!(outside.is_empty() && outside.outside == 1);
        assert_eq!(
            UsageRules::parse(
                b"\xff\xfe\nUser-agent: *\nContent-Usage: \xff=n\n",
                "scraper"
            )
            .malformed,
            1
        );
    }
}
