//! The documented, validated configuration that every command reads.
//!
//! `config.yml` is parsed with `serde-saphyr` into these types; unknown keys and
//! wrong types are errors that name the file, the line and what was expected.
//! Every field has a default here *and* a comment next to that default in the
//! shipped `config.yml`. Command-line flags are merged over the file by
//! [`Config::apply_overrides`]; nothing below the CLI knows about clap.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// The whole `config.yml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub keywords: Keywords,
    pub sources: Vec<Source>,
    /// Extra seeds not tied to one source (cross-site feeds such as news searches).
    pub seeds: Vec<String>,
    pub crawl: Crawl,
    pub dataset: Dataset,
    pub health: Health,
}

/// The two-tier relevance rule and the article test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Keywords {
    /// Broad vocabulary (legacy word-count rule): counted and reported as `keywords`.
    pub targets: Vec<String>,
    /// Terms only an AI story uses.
    pub strong_targets: Vec<String>,
    /// Broad mentions a page needs (in title + text).
    pub min_target_mentions: u32,
    /// Strong mentions a page needs (in title + text): the gate's second tier.
    pub min_strong_mentions: u32,
    /// Legacy (the old rule's density alternative, now part of the score's
    /// mentions): accepted so older configs load, not used by the rule.
    pub min_strong_density: f64,
    /// Legacy, with `min_strong_density`: accepted, not used by the rule.
    pub min_dense_mentions: u32,
    /// Share of text that must sit in paragraph-length blocks for a page to be an article.
    pub min_prose_ratio: f64,
    /// Strong terms with another meaning outside the topic, in groups that
    /// share the context words confirming the topic's meaning.
    pub ambiguous: Vec<Ambiguous>,
    /// `relevance_score` a page needs (0 to 1), on top of the two-tier gate.
    pub min_relevance_score: f64,
    /// Prose words a page needs; fewer make it a thin page (score 0).
    pub min_article_words: u32,
    /// How the score's parts are weighed.
    pub score: ScoreWeights,
    /// Vocabularies of other languages, by ISO 639-1 code: a page whose `lang`
    /// is listed is judged with that language's `targets`, `strong_targets`
    /// and `ambiguous` instead of the lists above, which are English's and the
    /// fallback for every other page (and for a record without `lang`). The
    /// thresholds and weights above hold for every language.
    pub languages: BTreeMap<LangCode, Vocabulary>,
}

/// One language's topic vocabulary (`keywords.languages.<code>`), with the
/// same meaning and matching rules as the English lists of [`Keywords`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Vocabulary {
    pub targets: Vec<String>,
    pub strong_targets: Vec<String>,
    pub ambiguous: Vec<Ambiguous>,
}

/// A `keywords.languages` key: an ISO 639-1 code (two lower-case letters,
/// as records' `lang`), other than `en`, whose lists are the top-level ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LangCode(pub String);

impl<'de> Deserialize<'de> for LangCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let code = String::deserialize(d)?;
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(serde::de::Error::custom(format!(
                "keywords.languages: `{code}` is not an ISO 639-1 code (two lower-case letters, \
                 such as de or zh)"
            )));
        }
        if code == "en" {
            return Err(serde::de::Error::custom(
                "keywords.languages: `en` is the top-level targets, strong_targets and \
                 ambiguous; list other languages here",
            ));
        }
        Ok(LangCode(code))
    }
}

/// Strong terms that also mean something else, and the words that, in the
/// same paragraph, confirm the topic's meaning.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ambiguous {
    pub terms: Vec<String>,
    pub context: Vec<String>,
}

/// Weights of the relevance score's parts (see `relevance::score`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreWeights {
    /// Weight of the number of strong mentions in prose.
    pub mentions: f64,
    /// Mentions that give the full mentions part.
    pub full_mentions: u32,
    /// In texts longer than this many prose words, mentions are scaled down
    /// to this length (0: never).
    pub per_words: u32,
    /// Weight of the share of paragraphs that mention the topic.
    pub spread: f64,
    /// Share of paragraphs that gives the full spread part.
    pub full_spread: f64,
    /// Weight of a strong term in the title or lede.
    pub title_or_lede: f64,
    /// Weight of the number of distinct strong terms.
    pub diversity: f64,
    /// Distinct terms that give the full diversity part.
    pub full_terms: u32,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            mentions: 0.45,
            full_mentions: 12,
            per_words: 1000,
            spread: 0.35,
            full_spread: 0.6,
            title_or_lede: 0.12,
            diversity: 0.08,
            full_terms: 4,
        }
    }
}

impl Keywords {
    fn validate(&self) -> Result<(), String> {
        crate::relevance::check_keywords(self)?;
        for (name, v) in [
            ("keywords.min_relevance_score", self.min_relevance_score),
            ("keywords.score.full_spread", self.score.full_spread),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name}: expected a number between 0 and 1, got {v}"
                ));
            }
        }
        let w = &self.score;
        for (name, v) in [
            ("mentions", w.mentions),
            ("spread", w.spread),
            ("title_or_lede", w.title_or_lede),
            ("diversity", w.diversity),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!(
                    "keywords.score.{name}: expected a weight of 0 or more, got {v}"
                ));
            }
        }
        if w.mentions + w.spread + w.title_or_lede + w.diversity <= 0.0 {
            return Err("keywords.score: expected at least one weight above 0".into());
        }
        if w.full_mentions == 0 || w.full_terms == 0 || w.full_spread == 0.0 {
            return Err(
                "keywords.score: full_mentions, full_terms and full_spread must be above 0".into(),
            );
        }
        check_ambiguous("keywords", &self.strong_targets, &self.ambiguous)?;
        for (code, v) in &self.languages {
            check_ambiguous(
                &format!("keywords.languages.{}", code.0),
                &v.strong_targets,
                &v.ambiguous,
            )?;
        }
        Ok(())
    }
}

/// Each `ambiguous` group has terms and context words, and its terms are
/// strong terms of the same vocabulary.
fn check_ambiguous(prefix: &str, strong: &[String], ambiguous: &[Ambiguous]) -> Result<(), String> {
    for (i, a) in ambiguous.iter().enumerate() {
        if a.terms.is_empty() || a.context.is_empty() {
            return Err(format!(
                "{prefix}.ambiguous[{i}]: expected non-empty `terms` and `context` lists"
            ));
        }
        if let Some(t) = a.terms.iter().find(|t| !strong.contains(t)) {
            return Err(format!(
                "{prefix}.ambiguous[{i}].terms: `{t}` is not in strong_targets (write it \
                 exactly as it is there)"
            ));
        }
    }
    Ok(())
}

impl Default for Keywords {
    fn default() -> Self {
        Keywords {
            targets: Vec::new(),
            strong_targets: Vec::new(),
            min_target_mentions: 3,
            min_strong_mentions: 2,
            min_strong_density: 8.0,
            min_dense_mentions: 5,
            min_prose_ratio: 0.5,
            ambiguous: Vec::new(),
            min_relevance_score: 0.5,
            min_article_words: 120,
            score: ScoreWeights::default(),
            languages: BTreeMap::new(),
        }
    }
}

/// One site: exactly its host (with or without `www.`) and optional path prefix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub host: String,
    #[serde(default)]
    pub path: Option<String>,
    /// Pages, RSS/Atom/JSON feeds or sitemaps to start from. Empty means the host's home page.
    #[serde(default)]
    pub seeds: Vec<String>,
}

impl Source {
    /// The entry as one line of `config.yml`'s `sources:` list, in the flow
    /// style the shipped file uses (`- {host: ..., path: ..., seeds: [...]}`).
    pub fn yaml_line(&self) -> String {
        let mut parts = vec![format!("host: {}", yaml_scalar(&self.host))];
        if let Some(p) = &self.path {
            parts.push(format!("path: {}", yaml_scalar(p)));
        }
        let seeds: Vec<String> = self.seeds.iter().map(|s| yaml_scalar(s)).collect();
        parts.push(format!("seeds: [{}]", seeds.join(", ")));
        format!("- {{{}}}", parts.join(", "))
    }
}

/// A plain scalar when it is safe in a YAML flow collection, else double-quoted.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "./-_~%=&?+@:".contains(c))
        && !s.contains(": ")
        && !s.ends_with(':')
        && !s.starts_with(['-', '?', ':', '@', '%', '&']);
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// How a run may wander.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Only the configured sources (and `--seed` hosts).
    #[default]
    Domains,
    /// Also other hosts, linked from relevant pages, with caps and probation.
    Open,
}

/// How the frontier chooses (`crawl.frontier_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FrontierPolicy {
    /// Within a host the most valuable URL first; hosts weighted by yield; a
    /// fetch budget that would run out before the time box is paced.
    #[default]
    Focused,
    /// Within a host the most valuable URL first; hosts in plain round-robin;
    /// no pacing (a baseline).
    BestFirst,
    /// Within a host by origin then depth, in arrival order; hosts in plain
    /// round-robin; no pacing (a baseline).
    RoundRobin,
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "domains" => Ok(Scope::Domains),
            "open" => Ok(Scope::Open),
            _ => Err(format!("expected `domains` or `open`, got `{s}`")),
        }
    }
}

/// What to do with publishers' AI-use reservations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AiUsePolicy {
    #[default]
    Respect,
    Record,
    Ignore,
}

/// What to do with the text of pages that are not free to read
/// (`accessible_for_free: false`, see `extract::paywall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PaywalledText {
    /// Store the page with all the text it carries, the paywalled part too.
    #[default]
    Store,
    /// Store the page with only the text outside its paywalled parts (what a
    /// reader without a subscription sees); the record says it is not free.
    Flag,
    /// Do not store pages that are not free to read.
    Skip,
}

/// `crawl.archive`: which fetched responses are kept as WARC records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Archive {
    /// Nothing (the default: raw HTML is large, and only `scraper reextract` needs it).
    #[default]
    None,
    /// The response of every stored article.
    Articles,
    /// Every fetched page, feed and sitemap (the final hop's answer, any status).
    All,
}

/// A duration written as `90s`, `40m`, `1h30m`, `250ms` or a bare number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Span(pub Duration);

impl Span {
    pub fn secs(s: u64) -> Span {
        Span(Duration::from_secs(s))
    }
    pub fn millis(ms: u64) -> Span {
        Span(Duration::from_millis(ms))
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if !ms.is_multiple_of(1000) {
            write!(f, "{ms}ms")
        } else {
            write!(f, "{}s", ms / 1000)
        }
    }
}

impl std::str::FromStr for Span {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(Span)
    }
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Float(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(Span(Duration::from_secs(n))),
            Raw::Float(f) if f >= 0.0 && f.is_finite() => Ok(Span(Duration::from_secs_f64(f))),
            Raw::Float(f) => Err(serde::de::Error::custom(format!(
                "expected a non-negative duration, got {f}"
            ))),
            Raw::Text(t) => parse_duration(&t)
                .map(Span)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Parse `90s`, `40m`, `1h30m`, `250ms`, `2d`, or a bare (possibly fractional) number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "expected a duration such as `90s`, `40m`, `1h30m`, `250ms` or seconds, got `{text}`"
        )
    };
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = t.parse::<f64>() {
        return if secs >= 0.0 && secs.is_finite() {
            Ok(Duration::from_secs_f64(secs))
        } else {
            Err(bad())
        };
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let secs = match unit {
            "ms" => n / 1000.0,
            "s" | "sec" | "secs" => n,
            "m" | "min" | "mins" => n * 60.0,
            "h" | "hr" | "hrs" => n * 3600.0,
            "d" | "day" | "days" => n * 86400.0,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(secs);
    }
    Ok(total)
}

/// Crawl limits, politeness and scheduling.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Crawl {
    /// Fetches in flight across all hosts.
    pub concurrency: usize,
    /// Fetches in flight to one host.
    pub per_host_concurrency: usize,
    /// Minimum time between two requests to one host (raised by robots.txt Crawl-delay).
    pub min_host_gap: Span,
    /// Upper bound on the gap a Crawl-delay may impose.
    pub max_crawl_delay: Span,
    /// Fetch budget: every request counts (robots, feeds, sitemaps, 304s). 0 = unlimited.
    pub max_pages: u64,
    /// Stop after this many stored articles. 0 = unlimited.
    pub max_hits: u64,
    /// Time box for the run. 0 = unlimited.
    pub max_duration: Span,
    /// Grace period for in-flight fetches after a stop.
    pub stop_grace: Span,
    /// Skip feed/sitemap entries older than this: a date, an RFC 3339 time, `auto` or empty.
    pub min_lastmod: Option<String>,
    /// The date `min_lastmod` held in the file when `--min-lastmod auto`
    /// replaced it: `auto` never reaches back before it (not a key of its own).
    #[serde(skip)]
    pub min_lastmod_floor: Option<String>,
    /// Subtracted from the last run's start when `min_lastmod` is `auto`.
    pub lastmod_overlap: Span,
    /// Non-hit pages (home, section, tag) are fetched again after this many days.
    pub revisit_after_days: u32,
    /// URLs that failed for good (404, 410, redirect loop, too many
    /// redirects, too large, not HTML) are fetched again after this many days.
    pub retry_failed_after_days: u32,
    /// Seeds are fetched again this often during a run.
    pub reseed_every_secs: u64,
    /// Fetches per host before its yield weight applies.
    pub warmup_pages: u32,
    /// Smoothing of the per-host hit-ratio moving average (0..1, weight of the newest fetch).
    pub yield_alpha: f64,
    /// No host gets fewer turns than this share of the best host's.
    pub min_host_weight: f64,
    /// Most URLs held in the queue; past it the lowest-priority entries are dropped.
    pub max_queue: usize,
    /// How the frontier ranks URLs and hosts, and whether it paces the budget.
    pub frontier_policy: FrontierPolicy,
    /// Most links followed away from a seed.
    pub max_depth: u32,
    pub scope: Scope,
    /// The share of hosts this runner crawls when a crawl is split across
    /// runners: `i/N` (0-based); `0/1` crawls every host.
    pub partition: crate::partition::Partition,
    /// Hosts (and their subdomains) never fetched in open scope.
    pub deny_hosts: Vec<String>,
    /// Most pages fetched from one host outside `sources` in one run (open scope).
    pub host_page_cap: u64,
    /// Fetches after which a host outside `sources` must show `host_min_hit_ratio`.
    pub host_probation_pages: u64,
    pub host_min_hit_ratio: f64,
    /// Consecutive failures after which a host is rested for the rest of the run.
    pub host_max_failures: u32,
    /// Fetch hosts that are, or resolve to, loopback, private or link-local
    /// addresses (off: the crawler is never a tool against its own network).
    pub allow_private_addresses: bool,
    /// Largest body accepted on the wire (compressed), in bytes.
    pub max_raw_bytes: u64,
    /// Largest body accepted after decompression, in bytes.
    pub max_body_bytes: u64,
    /// Most body bytes held in memory by all fetches together (decoded
    /// buffers until parsed); a fetch past it waits for room. 0 = no budget.
    pub max_body_bytes_in_flight: u64,
    /// Pages and listings parsed at once (parsing takes a few times a
    /// page's size; the parser's own caps bound each one).
    pub parse_concurrency: usize,
    /// Largest robots.txt read (RFC 9309 asks for at least 500 KiB).
    pub max_robots_bytes: u64,
    /// `/.well-known/tdmrep.json` (or its absence) answered this many days
    /// ago or less is reused without asking (0 = ask every run).
    pub tdmrep_refresh_days: u32,
    pub max_redirects: usize,
    pub connect_timeout: Span,
    /// Longest wait for any single read of the body.
    pub read_timeout: Span,
    /// Longest a whole request may take.
    pub request_timeout: Span,
    /// Longest a 429/503 Retry-After may rest a host before it is given up for the run.
    pub max_retry_after: Span,
    pub user_agent: String,
    /// Web Bot Auth: sign every request (absent: requests are not signed).
    pub web_bot_auth: Option<WebBotAuth>,
    /// First id when no `data/state/next_id` exists (continues legacy numbering).
    pub first_id: i64,
    pub ai_use_policy: AiUsePolicy,
    /// Pages not free to read: `store`, `flag` or `skip` (see [`PaywalledText`]).
    pub paywalled_text: PaywalledText,
    /// Which raw responses go to `data/warc/<run-id>.warc.gz` (see `crate::store::warc`).
    pub archive: Archive,
    /// How often the shard writer closes a zstd frame, at the latest.
    pub flush_every: Span,
    /// Limits against crawler traps (see `crate::url::trap`).
    pub traps: Traps,
}

/// `crawl.web_bot_auth`: the operator's signing key and where its public
/// half is published (see `crate::net::sign`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebBotAuth {
    /// Ed25519 private key, PEM PKCS#8; relative to the config file's folder.
    /// May be left out when `SCRAPER_WEB_BOT_AUTH_KEY` holds the PEM.
    #[serde(default)]
    pub key_file: Option<PathBuf>,
    /// URL of the operator's key directory (sent as `Signature-Agent`).
    pub signature_agent: String,
}

impl WebBotAuth {
    fn validate(&self) -> Result<(), String> {
        let name = "crawl.web_bot_auth.signature_agent";
        check_url(&self.signature_agent).map_err(|e| format!("{name}: {e}"))?;
        if !self.signature_agent.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "{name}: expected a URL of printable ASCII (no spaces), got `{}`",
                self.signature_agent
            ));
        }
        Ok(())
    }
}

/// `crawl.traps`: general rules against crawler traps; 0 turns one off.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Traps {
    /// Longest URL queued, in bytes.
    pub max_url_bytes: usize,
    /// Most query parameters in a queued URL.
    pub max_query_params: usize,
    /// Most times one path segment may occur in a path (`/a/b/a/b/a/b`).
    pub max_segment_repeats: usize,
    /// Most URLs found by links per host and URL pattern in one run (numbers
    /// in the path folded, any query: calendars, faceted search). Feed and
    /// sitemap entries and seeds are not counted.
    pub max_urls_per_pattern: u32,
    /// Most date pages (calendar days, archive months) found by links on
    /// date pages of the same host and pattern in one run.
    pub max_date_steps: u32,
}

impl Default for Traps {
    fn default() -> Traps {
        let r = crate::url::trap::TrapRules::default();
        Traps {
            max_url_bytes: r.max_url_bytes,
            max_query_params: r.max_query_params,
            max_segment_repeats: r.max_segment_repeats,
            max_urls_per_pattern: r.max_urls_per_pattern,
            max_date_steps: r.max_date_steps,
        }
    }
}

impl Traps {
    pub fn rules(&self) -> crate::url::trap::TrapRules {
        crate::url::trap::TrapRules {
            max_url_bytes: self.max_url_bytes,
            max_query_params: self.max_query_params,
            max_segment_repeats: self.max_segment_repeats,
            max_urls_per_pattern: self.max_urls_per_pattern,
            max_date_steps: self.max_date_steps,
        }
    }
}

impl Default for Crawl {
    fn default() -> Self {
        Crawl {
            concurrency: 16,
            per_host_concurrency: 1,
            min_host_gap: Span::secs(1),
            max_crawl_delay: Span::secs(30),
            max_pages: 0,
            max_hits: 0,
            max_duration: Span::default(),
            stop_grace: Span::secs(5),
            min_lastmod: None,
            min_lastmod_floor: None,
            lastmod_overlap: Span::secs(86400),
            revisit_after_days: 7,
            retry_failed_after_days: 30,
            reseed_every_secs: 3600,
            warmup_pages: 10,
            yield_alpha: 0.1,
            min_host_weight: 0.1,
            max_queue: 1_000_000,
            frontier_policy: FrontierPolicy::Focused,
            max_depth: 8,
            scope: Scope::Domains,
            partition: crate::partition::Partition::WHOLE,
            deny_hosts: Vec::new(),
            host_page_cap: 200,
            host_probation_pages: 20,
            host_min_hit_ratio: 0.05,
            host_max_failures: 8,
            allow_private_addresses: false,
            max_raw_bytes: 8 << 20,
            max_body_bytes: 16 << 20,
            max_body_bytes_in_flight: 32 << 20,
            parse_concurrency: 2,
            max_robots_bytes: 512 << 10,
            tdmrep_refresh_days: 7,
            max_redirects: 5,
            connect_timeout: Span::secs(10),
            read_timeout: Span::secs(15),
            request_timeout: Span::secs(30),
            max_retry_after: Span::secs(600),
            user_agent: "scraper/0.1 (+https://github.com/scraper-dataset/scraper)".into(),
            web_bot_auth: None,
            first_id: 0,
            ai_use_policy: AiUsePolicy::Respect,
            paywalled_text: PaywalledText::Store,
            archive: Archive::None,
            flush_every: Span::secs(5),
            traps: Traps::default(),
        }
    }
}

/// What the dataset card says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dataset {
    pub pretty_name: String,
    /// SPDX-style id or `other`.
    pub license: String,
    /// The sentence under "License" in the card.
    pub license_note: String,
    /// ISO 639-1 codes.
    pub languages: Vec<String>,
    /// Hugging Face repo id used by scripts/publish.sh.
    pub hub_repo: String,
}

impl Default for Dataset {
    fn default() -> Self {
        Dataset {
            pretty_name: "AI and technology news articles".into(),
            license: "other".into(),
            license_note: "Article texts remain the property of their publishers. They are \
                           shared here for research only; this dataset grants no licence to them."
                .into(),
            languages: vec!["en".into()],
            hub_repo: String::new(),
        }
    }
}

/// Thresholds of the source-health rules (`scraper health`, see
/// `health::rules` for what each rule says).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Health {
    /// Runs of history read per source (runs that reached it).
    pub window: usize,
    /// A failure that lasts this many runs in a row turns `degraded` into `broken`.
    pub broken_after_runs: u32,
    /// Share of a source's requests that must fail for `degraded` when not all do.
    pub failing_share: f64,
    /// Fewest requests a run must make to a source before `failing_share` is judged.
    pub min_requests: u64,
    /// Fewest pages (reached from listings or links) a run must parse before extraction is judged.
    pub min_pages: u64,
    /// Extraction has collapsed when the share of pages judged articles falls below this fraction of the usual ...
    pub article_share_drop: f64,
    /// ... or the median text length below this fraction of the usual.
    pub text_drop: f64,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            window: 10,
            broken_after_runs: 2,
            failing_share: 0.5,
            min_requests: 3,
            min_pages: 5,
            article_share_drop: 0.5,
            text_drop: 0.3,
        }
    }
}

/// Values from the command line that override `config.yml`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub max_pages: Option<u64>,
    pub max_hits: Option<u64>,
    pub max_duration: Option<Duration>,
    pub min_lastmod: Option<String>,
    pub scope: Option<Scope>,
    pub partition: Option<crate::partition::Partition>,
}

impl Config {
    /// Read, parse and validate a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(&text, path)
    }

    /// Parse and validate config text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = if text.trim().is_empty() {
            Config::default()
        } else {
            serde_saphyr::from_str(text).map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?
        };
        let mut config = config;
        if let Some(w) = &mut config.crawl.web_bot_auth
            && let Some(k) = &w.key_file
            && k.is_relative()
            && let Some(dir) = path.parent()
        {
            w.key_file = Some(dir.join(k));
        }
        config.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        self.keywords.validate()?;
        let c = &self.crawl;
        if c.concurrency == 0 {
            return Err("crawl.concurrency: expected at least 1".into());
        }
        if c.parse_concurrency == 0 {
            return Err("crawl.parse_concurrency: expected at least 1".into());
        }
        if c.per_host_concurrency == 0 {
            return Err("crawl.per_host_concurrency: expected at least 1".into());
        }
        for (name, v) in [
            ("crawl.min_host_weight", c.min_host_weight),
            ("crawl.host_min_hit_ratio", c.host_min_hit_ratio),
            ("crawl.yield_alpha", c.yield_alpha),
            ("keywords.min_prose_ratio", self.keywords.min_prose_ratio),
            ("health.failing_share", self.health.failing_share),
            ("health.article_share_drop", self.health.article_share_drop),
            ("health.text_drop", self.health.text_drop),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name}: expected a number between 0 and 1, got {v}"
                ));
            }
        }
        if !(0..crate::store::ids::LEGACY_LIMIT).contains(&c.first_id) {
            return Err(format!(
                "crawl.first_id: expected a number from 0 to {} (ids above are run blocks), got {}",
                crate::store::ids::LEGACY_LIMIT - 1,
                c.first_id
            ));
        }
        if self.health.window < 2 {
            return Err(format!(
                "health.window: expected at least 2 runs (a trend needs two), got {}",
                self.health.window
            ));
        }
        if self.health.broken_after_runs == 0 {
            return Err("health.broken_after_runs: expected at least 1".into());
        }
        if self.health.min_pages == 0 {
            return Err("health.min_pages: expected at least 1".into());
        }
        if c.user_agent.trim().is_empty() {
            return Err(
                "crawl.user_agent: expected a non-empty User-Agent with a contact URL".into(),
            );
        }
        for (i, s) in self.sources.iter().enumerate() {
            if s.host.is_empty() || s.host.contains('/') || s.host.contains(':') {
                return Err(format!(
                    "sources[{i}].host: expected a bare host name such as `example.com`, got `{}`",
                    s.host
                ));
            }
            if let Some(p) = &s.path
                && !p.starts_with('/')
            {
                return Err(format!(
                    "sources[{i}].path: expected a path starting with `/`, got `{p}`"
                ));
            }
            for seed in &s.seeds {
                check_url(seed).map_err(|e| format!("sources[{i}].seeds: {e}"))?;
            }
        }
        for seed in &self.seeds {
            check_url(seed).map_err(|e| format!("seeds: {e}"))?;
        }
        if let Some(w) = &c.web_bot_auth {
            w.validate()?;
        }
        if let Some(m) = &c.min_lastmod {
            crate::date::parse_cutoff(m, chrono::Utc::now())
                .map_err(|e| format!("crawl.min_lastmod: {e}"))?;
        }
        Ok(())
    }

    /// Merge command-line values over the file's.
    pub fn apply_overrides(&mut self, o: &Overrides) {
        if let Some(v) = o.max_pages {
            self.crawl.max_pages = v;
        }
        if let Some(v) = o.max_hits {
            self.crawl.max_hits = v;
        }
        if let Some(v) = o.max_duration {
            self.crawl.max_duration = Span(v);
        }
        if let Some(v) = &o.min_lastmod {
            // `auto` over a configured date keeps that date as its floor.
            let file = self.crawl.min_lastmod.take();
            if v.trim() == "auto" {
                self.crawl.min_lastmod_floor = file.filter(|f| f.trim() != "auto");
            }
            self.crawl.min_lastmod = Some(v.clone());
        }
        if let Some(v) = o.scope {
            self.crawl.scope = v;
        }
        if let Some(v) = o.partition {
            self.crawl.partition = v;
        }
    }
}

fn check_url(s: &str) -> Result<(), String> {
    match ::url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(format!("expected an absolute http(s) URL, got `{s}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let table = [
            ("90s", 90_000),
            ("40m", 2_400_000),
            ("1h30m", 5_400_000),
            ("250ms", 250),
            ("12", 12_000),
            ("0.05", 50),
            ("2d", 172_800_000),
        ];
        for (text, ms) in table {
            assert_eq!(parse_duration(text).unwrap().as_millis(), ms, "{text}");
        }
        for bad in ["", "abc", "10x", "-5", "m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_key_names_the_line() {
        let text = "crawl:\n  concurrency: 4\n  concurency: 5\n";
        let err = Config::parse(text, Path::new("c.yml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.yml"), "{err}");
        assert!(err.contains("concurency"), "{err}");
        assert!(err.contains('3'), "line number missing: {err}");
    }

    #[test]
    fn wrong_type_names_the_line() {
        let text = "keywords:\n  targets: [ai]\ncrawl:\n  max_pages: lots\n";
        let err = Config::parse(text, Path::new("c.yml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains('4'), "line number missing: {err}");
    }

    #[test]
    fn defaults_and_spans() {
        let text = "crawl:\n  min_host_gap: 50ms\n  max_duration: 1h30m\n  scope: open\n";
        let c = Config::parse(text, Path::new("c.yml")).unwrap();
        assert_eq!(c.crawl.min_host_gap.0, Duration::from_millis(50));
        assert_eq!(c.crawl.max_duration.0, Duration::from_secs(5400));
        assert_eq!(c.crawl.scope, Scope::Open);
        assert_eq!(c.crawl.concurrency, 16);
    }

    #[test]
    fn a_source_line_parses_back() {
        let s = Source {
            host: "ex.test".into(),
            path: Some("/blog".into()),
            seeds: vec![
                "http://ex.test/feed.xml".into(),
                "https://ex.test/a b?x=[1],{2}#c".into(),
                "http://ex.test/q?a=1&b=\"2\"".into(),
            ],
        };
        let text = format!("sources:\n  {}\n", s.yaml_line());
        let c = Config::parse(&text, Path::new("c.yml")).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.sources[0].host, "ex.test");
        assert_eq!(c.sources[0].path.as_deref(), Some("/blog"));
        assert_eq!(c.sources[0].seeds, s.seeds);
    }

    #[test]
    fn invalid_values() {
        let text = "sources:\n  - host: https://x.com/\n";
        assert!(Config::parse(text, Path::new("c.yml")).is_err());
        let text = "crawl:\n  min_host_weight: 3\n";
        assert!(Config::parse(text, Path::new("c.yml")).is_err());
        for bad in [
            "health:\n  failing_share: 1.5\n",
            "health:\n  window: 1\n",
            "health:\n  broken_after_runs: 0\n",
            "health:\n  min_pages: 0\n",
        ] {
            let err = Config::parse(bad, Path::new("c.yml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("health."), "{bad}: {err}");
        }
        let err = Config::parse("health:\n  windw: 3\n", Path::new("c.yml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("windw") && err.contains('2'), "{err}");
    }

    #[test]
    fn web_bot_auth_section() {
        let c = Config::parse("crawl:\n  user_agent: x\n", Path::new("c.yml")).unwrap();
        assert!(c.crawl.web_bot_auth.is_none());
        let text = "crawl:\n  web_bot_auth:\n    key_file: keys/bot.pem\n    signature_agent: https://bot.example\n";
        let c = Config::parse(text, Path::new("/etc/scraper/config.yml")).unwrap();
        let w = c.crawl.web_bot_auth.unwrap();
        assert_eq!(
            w.key_file.as_deref(),
            Some(Path::new("/etc/scraper/keys/bot.pem")),
            "relative to the config file"
        );
        assert_eq!(w.signature_agent, "https://bot.example");
        for (bad, want) in [
            (
                "crawl:\n  web_bot_auth:\n    key_file: k.pem\n",
                "signature_agent",
            ),
            (
                "crawl:\n  web_bot_auth:\n    signature_agent: bot.example\n",
                "crawl.web_bot_auth.signature_agent",
            ),
            (
                "crawl:\n  web_bot_auth:\n    signature_agent: https://b.test\n    keyfile: k.pem\n",
                "keyfile",
            ),
        ] {
            let err = Config::parse(bad, Path::new("c.yml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{bad}: {err}");
        }
    }

    /// A keyword list too large for one pattern is refused by name, not
    /// turned into a rule that finds nothing.
    #[test]
    fn a_keyword_list_too_large_to_compile_is_a_config_error() {
        let keywords = Keywords {
            targets: (0..20_000)
                .map(|i| format!("term number {i} of a very long list"))
                .collect(),
            ..Keywords::default()
        };
        let err = keywords.validate().unwrap_err();
        assert!(err.starts_with("keywords.targets: 20000 terms"), "{err}");
        assert!(Keywords::default().validate().is_ok());
    }
}

#[cfg(test)]
mod shipped {
    #[test]
    fn shipped_config_loads() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.yml");
        let c = super::Config::load(&path).unwrap();
        assert!(c.sources.len() >= 45, "{}", c.sources.len());
        assert!(!c.keywords.strong_targets.is_empty());
    }
}
