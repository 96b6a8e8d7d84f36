//! The IETF AI-preferences vocabulary (draft-ietf-aipref-vocab) where the
//! attachment draft (draft-ietf-aipref-attach) puts it: the `Content-Usage`
//! response header and robots.txt `Content-Usage` rules. Pure.
//!
//! An expression is a Structured Fields Dictionary (RFC 9651):
//! `train-ai=n, search=y`. Keys are category labels, values the tokens `y`
//! (allowed) or `n` (not allowed); unknown keys, other values and all
//! parameters are ignored, as the vocabulary asks. A value that is not a valid
//! Dictionary (`Train-AI=n`, `train-ai=n,`, `train ai=n`) is ignored whole and
//! counted as malformed.
//!
//! Categories nest: `train-genai` inside `train-ai`; `train-ai`, `search` and
//! `ai-use` inside `bots` (all automated processing). A use takes the
//! preference of its own category, else of the nearest enclosing one that an
//! expression states. The crawl's question is AI training (the dataset
//! trains models, generative ones included): an expression reserves it when
//! `train-ai` or `train-genai` resolves to `n` ([`reserves_training`]).
//!
//! robots.txt: `Content-Usage: [path] expression` lines in the group that
//! applies to us (as robots rules are chosen; lines outside any group apply
//! when our group has none that match). The path is a robots pattern (`*`,
//! final `$`), `/` when omitted; the rule with the longest matching path
//! applies, and rules with the same path are combined (`n` wins).

use serde::Serialize;

/// The category labels of the vocabulary draft, each with the category that
/// encloses it.
const CATEGORIES: [(&str, Option<&str>); 5] = [
    ("bots", None),
    ("train-ai", Some("bots")),
    ("train-genai", Some("train-ai")),
    ("search", Some("bots")),
    ("ai-use", Some("bots")),
];

/// One stated preference: `train-ai=n` is `{category: "train-ai", allowed: false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub category: String,
    pub allowed: bool,
}

/// A Content-Usage value: the known categories it states, in order; `Err`
/// when it is not a Structured Fields Dictionary.
pub fn parse_content_usage(value: &str) -> Result<Vec<Usage>, String> {
    let members = sf::dictionary(value)?;
    let mut out: Vec<Usage> = Vec::new();
    for (key, token) in members {
        if !CATEGORIES.iter().any(|(c, _)| *c == key) {
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

/// The preference an expression gives `category`: its own, else the
/// nearest enclosing category's; `None` when unstated.
pub fn resolve(prefs: &[Usage], category: &str) -> Option<bool> {
    let mut at = Some(category);
    while let Some(c) = at {
        if let Some(u) = prefs.iter().find(|u| u.category == c) {
            return Some(u.allowed);
        }
        at = CATEGORIES
            .iter()
            .find(|(name, _)| *name == c)
            .and_then(|(_, parent)| *parent);
    }
    None
}

/// Does this expression reserve AI training (`train-ai` or `train-genai` `n`)?
pub fn reserves_training(prefs: &[Usage]) -> bool {
    resolve(prefs, "train-ai") == Some(false) || resolve(prefs, "train-genai") == Some(false)
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
    pub prefs: Vec<Usage>,
}

/// The `Content-Usage` rules of a robots.txt that apply to one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UsageRules {
    /// Rules of the group for our agent (or `*`).
    pub group: Vec<UsageRule>,
    /// Rules outside any group.
    pub global: Vec<UsageRule>,
    /// Lines that could not be read (no expression, or not a Dictionary).
    pub malformed: usize,
}

impl UsageRules {
    /// Read the `Content-Usage` lines of a robots.txt body for `agent`.
    pub fn parse(robots_txt: &[u8], agent: &str) -> UsageRules {
        let (group, global) = super::robots::robots_lines(robots_txt, agent, "content-usage");
        let mut malformed = 0;
        let mut read = |lines: Vec<String>| -> Vec<UsageRule> {
            lines
                .iter()
                .filter_map(|l| {
                    let rule = parse_rule(l);
                    malformed += usize::from(rule.is_none());
                    rule
                })
                .collect()
        };
        let group = read(group);
        let global = read(global);
        UsageRules {
            group,
            global,
            malformed,
        }
    }

    /// The preferences for `path` (path and query): the longest matching
    /// rule of the group, else of the lines outside groups; rules with that
    /// same path combined. `None` when no rule matches.
    pub fn for_path(&self, path: &str) -> Option<Vec<Usage>> {
        longest_match(&self.group, path).or_else(|| longest_match(&self.global, path))
    }

    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.global.is_empty()
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

    pub fn dictionary(input: &str) -> Result<Vec<Member>, String> {
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
    fn categories_nest() {
        let table: [(Vec<Usage>, bool); 8] = [
            (vec![u("train-ai", false)], true),
            (vec![u("train-genai", false)], true),
            (vec![u("bots", false)], true),
            (vec![u("bots", false), u("train-ai", true)], false),
            (vec![u("train-ai", false), u("train-genai", true)], true),
            (vec![u("search", false), u("ai-use", false)], false),
            (vec![u("bots", true)], false),
            (vec![], false),
        ];
        for (prefs, want) in table {
            assert_eq!(reserves_training(&prefs), want, "{}", label(&prefs));
        }
        let prefs = vec![u("bots", false), u("search", true)];
        assert_eq!(resolve(&prefs, "search"), Some(true));
        assert_eq!(resolve(&prefs, "train-genai"), Some(false));
        assert_eq!(resolve(&[], "train-ai"), None);
    }

    #[test]
    fn robots_rules() {
        let txt = b"Content-Usage: bots=n\n\
            User-agent: *\nAllow: /\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n\
            Content-Usage: /open/ search=n\nContent-Usage: /odd/ Train-AI=n\nContent-Usage: /empty/\n\n\
            User-agent: scraper\nDisallow: /private\nContent-Usage: /news/*.html$ train-genai=n\n";
        let ours = UsageRules::parse(txt, "scraper");
        assert_eq!(ours.malformed, 0);
        assert_eq!(ours.group.len(), 1);
        let table = [
            ("/news/a.html", Some(vec![u("train-genai", false)])),
            // Our group has no rule for it: the lines outside groups.
            ("/news/a.html?x=1", Some(vec![u("bots", false)])),
            ("/", Some(vec![u("bots", false)])),
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
        assert_eq!(
            UsageRules::parse(b"\xff\xfe\nContent-Usage: \xff=n\n", "scraper").malformed,
            1
        );
    }
}
