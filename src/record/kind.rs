//! Two closed sets the records name: what a URL is expected to be ([`Kind`],
//! in events, listings and health files) and how a run may wander
//! ([`Scope`], `crawl.scope`, in `run_start`). Defined here, in the schema,
//! and re-exported by `frontier` and `config`.

use serde::{Deserialize, Serialize};

/// What a URL is expected to be, so the engine knows how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    #[default]
    Page,
    Feed,
    Sitemap,
}

impl Kind {
    /// The serde name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Page => "page",
            Kind::Feed => "feed",
            Kind::Sitemap => "sitemap",
        }
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
