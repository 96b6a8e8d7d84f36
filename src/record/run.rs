//! [`RunHeader`]: the keys every per-run file starts with (the run summary
//! in `state/runs/`, the health record in `state/health/`): which run, when
//! it started and ended, and what stopped it.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StopReason;

/// Which run, when, and why it stopped. Flattened into the files: its keys
/// stand first, at the top level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
    /// What ended the run (`max_pages`, `max_hits`, `max_duration`,
    /// `interrupted`, `exhausted`); `None` until it ends.
    #[serde(default)]
    pub stopped_by: Option<Stopped>,
}

/// `stopped_by` as a file holds it: a [`StopReason`] this version knows, or
/// the name a newer version (or a hand edit) wrote, kept as text so a reader
/// shows it and a rewrite keeps it. Writers only ever set `Known`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stopped {
    Known(StopReason),
    Unknown(String),
}

impl Stopped {
    /// The reason, when this version knows it.
    pub fn known(&self) -> Option<StopReason> {
        match self {
            Stopped::Known(r) => Some(*r),
            Stopped::Unknown(_) => None,
        }
    }
}

impl From<StopReason> for Stopped {
    fn from(r: StopReason) -> Stopped {
        Stopped::Known(r)
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::Known(r) => r.fmt(f),
            Stopped::Unknown(s) => f.write_str(s),
        }
    }
}

impl RunHeader {
    /// A run starting at `started_at`, not finished yet.
    pub fn new(run_id: &str, started_at: DateTime<Utc>) -> RunHeader {
        RunHeader {
            run_id: run_id.to_string(),
            started_at,
            finished_at: None,
            stopped_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known names read as the enum and write back the same; a name this
    /// version does not know is kept as text, not an error.
    #[test]
    fn stop_reasons_known_and_unknown() {
        let read = |s: &str| serde_json::from_str::<Stopped>(s).unwrap();
        assert_eq!(read(r#""max_hits""#), Stopped::Known(StopReason::MaxHits));
        assert_eq!(read(r#""max_hits""#).known(), Some(StopReason::MaxHits));
        let later = read(r#""disk_full""#);
        assert_eq!(later, Stopped::Unknown("disk_full".into()));
        assert_eq!(
            (later.known(), later.to_string()),
            (None, "disk_full".into())
        );
        for s in [r#""exhausted""#, r#""disk_full""#] {
            assert_eq!(serde_json::to_string(&read(s)).unwrap(), s);
        }
        assert!(serde_json::from_str::<Stopped>("3").is_err());
    }
}
