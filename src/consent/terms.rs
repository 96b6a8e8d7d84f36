//! The words every signal module shares, and nothing else (a leaf, so the
//! modules of `consent` never import each other in a circle): where a
//! signal was read ([`Source`]) and which use of the pages the crawl asks
//! about ([`AiUsage`]).

use serde::{Deserialize, Serialize};

/// Where a signal was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// robots.txt.
    RobotsTxt,
    /// An HTTP response header.
    Header,
    /// An HTML `<meta>` or `<link>` tag.
    Meta,
    /// `/.well-known/tdmrep.json`.
    TdmRepJson,
}

impl Source {
    /// `robots.txt`, `header`, `html`, `tdmrep.json`: how labels name it.
    pub fn name(self) -> &'static str {
        match self {
            Source::RobotsTxt => "robots.txt",
            Source::Header => "header",
            Source::Meta => "html",
            Source::TdmRepJson => "tdmrep.json",
        }
    }
}

/// The use this crawl makes of the pages it stores (`crawl.ai_usage`), which
/// every signal is checked against. The dataset is for training models, so
/// the default is `train-ai`; `search` is for a crawl that only builds a
/// search index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AiUsage {
    /// AI training: aipref `train-ai`, Content Signals `ai-train`, RSL
    /// `ai-train` (or `ai-all`, `all`), a TDM reservation, `noai`.
    #[default]
    TrainAi,
    /// Building a search index: aipref `search`, Content Signals `search`,
    /// RSL `search` (or `all`).
    Search,
}

impl AiUsage {
    /// The aipref vocabulary label (draft-ietf-aipref-vocab-08).
    pub(crate) fn aipref_label(self) -> &'static str {
        match self {
            AiUsage::TrainAi => "train-ai",
            AiUsage::Search => "search",
        }
    }

    /// The Content Signals key.
    pub(crate) fn content_signal_key(self) -> &'static str {
        match self {
            AiUsage::TrainAi => "ai-train",
            AiUsage::Search => "search",
        }
    }

    /// The RSL usage tokens that cover this use.
    pub(crate) fn rsl_tokens(self) -> &'static [&'static str] {
        match self {
            AiUsage::TrainAi => &["ai-train", "ai-all", "all"],
            AiUsage::Search => &["search", "all"],
        }
    }
}

impl std::fmt::Display for AiUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.aipref_label())
    }
}
