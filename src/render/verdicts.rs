//! What `scraper probe` measured per source: does rendering add the story?
//! Kept in `data/state/render_verdicts.json` (one object, replaced
//! atomically by each probe that compared both ways), read by every crawl:
//! a source whose verdict says `render` has its pages rendered under
//! `render: auto`. A source the probe never compared has no entry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file under `data/state/`.
pub const FILE: &str = "render_verdicts.json";

/// The verdicts, by source key (`host` or `host/path`, `Source::key`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Verdicts {
    pub sources: BTreeMap<String, Verdict>,
}

/// One source's measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verdict {
    /// Rendering adds the story: render this source's pages under `auto`.
    pub render: bool,
    /// The day of the probe (`yyyy-mm-dd`).
    pub day: String,
    /// Pages compared both ways.
    pub compared: u64,
    /// Of those, pages that were articles only once rendered, or whose text grew by half.
    pub(crate) gained: u64,
    /// Median text characters, static and rendered.
    pub static_chars: u64,
    pub rendered_chars: u64,
    /// The verdict in words.
    pub reason: String,
}

impl Verdicts {
    /// The file in `state_dir`; none, or one that cannot be read, is no verdict (logged).
    pub(crate) fn load(state_dir: &Path) -> Verdicts {
        let path = state_dir.join(FILE);
        let Ok(bytes) = std::fs::read(&path) else {
            return Verdicts::default();
        };
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "render verdicts unreadable; ignored");
            Verdicts::default()
        })
    }

    /// Replace the file in `state_dir` (created if needed).
    pub(crate) fn save(&self, state_dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(state_dir)?;
        let bytes = serde_json::to_vec_pretty(self)?;
        crate::store::state::write_atomic(&state_dir.join(FILE), &bytes)?;
        Ok(())
    }

    /// Does the probe say `source` needs rendering? A key with or without
    /// `www.` names the same source (as `sources[].host` does).
    pub(crate) fn says_render(&self, source: &str) -> bool {
        let bare = |k: &str| k.strip_prefix("www.").unwrap_or(k).to_string();
        let want = bare(source);
        self.sources
            .iter()
            .any(|(k, v)| v.render && bare(k) == want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_round_trip_and_a_bad_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Verdicts::load(dir.path()), Verdicts::default());
        let mut v = Verdicts::default();
        v.sources.insert(
            "app.test".into(),
            Verdict {
                render: true,
                compared: 2,
                gained: 2,
                ..Verdict::default()
            },
        );
        v.save(dir.path()).unwrap();
        let back = Verdicts::load(dir.path());
        assert!(back.says_render("app.test"));
        assert!(back.says_render("www.app.test"));
        assert!(!back.says_render("news.test"));
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(Verdicts::load(dir.path()), Verdicts::default());
    }
}
