//! The documented, validated configuration that every command reads.
//!
//! `config.yml` is parsed with `serde-saphyr` into these types; unknown keys and
//! wrong types are errors that name the file, the line and what was expected.
//! Every field has a default here *and* a comment next to that default in the
//! shipped `config.yml`. Command-line flags are merged over the file by
//! [`Config::apply_overrides`]; nothing below the CLI knows about clap.
//!
//! `config` only composes sections: each domain owns its section's type and
//! its validation (`relevance::Keywords`, `source::Source`, `health::Health`,
//! `net::sign::WebBotAuth`, `frontier::Policy`, `record::Scope`); the crawl's
//! own knobs are `crawl.rs`, durations `span.rs`. They are re-exported here
//! under their `config.yml` names. No module below `config` imports it.

mod crawl;
mod render;
mod span;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::date::MinLastmod;
pub use crate::frontier::Policy as FrontierPolicy;
pub use crate::health::Health;
pub use crate::net::sign::WebBotAuth;
pub use crate::record::Scope;
pub use crate::relevance::{Ambiguous, Keywords, LangCode, ScoreWeights, Vocabulary};
pub use crate::source::{Render as RenderMode, Source};
pub use crawl::{AiUsePolicy, Archive, Crawl, PaywalledText, Traps};
pub use render::Render;
pub use span::Span;
pub(crate) use span::parse_duration;

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

/// What the dataset card says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dataset {
    pub pretty_name: String,
    /// SPDX-style id or `other`.
    pub license: String,
    /// The sentence under "License" in the card.
    pub(crate) license_note: String,
    /// ISO 639-1 codes.
    pub languages: Vec<String>,
    /// Hugging Face repo id used by scripts/publish.sh.
    pub hub_repo: String,
    /// Memory `scraper build` plans for, in MiB (see `dataset::Tuning::memory_bytes`).
    pub(crate) build_memory_mb: u64,
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
            build_memory_mb: 1024,
        }
    }
}

/// Values from the command line that override `config.yml`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub max_pages: Option<u64>,
    pub max_hits: Option<u64>,
    pub max_duration: Option<Duration>,
    pub min_lastmod: Option<MinLastmod>,
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

    /// Each section checks itself; `config` only composes them.
    fn validate(&self) -> Result<(), String> {
        self.keywords.validate()?;
        self.crawl.validate()?;
        self.health.validate()?;
        if self.dataset.build_memory_mb < 64 {
            return Err("dataset.build_memory_mb: at least 64 (MiB)".into());
        }
        for (i, s) in self.sources.iter().enumerate() {
            s.validate(i)?;
        }
        for seed in &self.seeds {
            crate::url::check_http_url(seed).map_err(|e| format!("seeds: {e}"))?;
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
        if let Some(v) = o.min_lastmod {
            // `auto` over a configured date keeps that date as its floor.
            if v == MinLastmod::Auto {
                self.crawl.min_lastmod_floor = self.crawl.min_lastmod.since();
            }
            self.crawl.min_lastmod = v;
        }
        if let Some(v) = o.scope {
            self.crawl.scope = v;
        }
        if let Some(v) = o.partition {
            self.crawl.partition = v;
        }
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
            render: Some(crate::source::Render::Always),
        };
        let text = format!("sources:\n  {}\n", s.yaml_line());
        let c = Config::parse(&text, Path::new("c.yml")).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.sources[0].host, "ex.test");
        assert_eq!(c.sources[0].path.as_deref(), Some("/blog"));
        assert_eq!(c.sources[0].seeds, s.seeds);
        assert_eq!(c.sources[0].render, s.render);
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

    /// Keyword lists have no size limit now that no regex holds them.
    #[test]
    fn a_long_keyword_list_is_valid() {
        let keywords = Keywords {
            targets: (0..20_000)
                .map(|i| format!("term number {i} of a very long list"))
                .collect(),
            ..Keywords::default()
        };
        assert!(keywords.validate().is_ok());
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
