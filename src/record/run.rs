//! [`RunHeader`]: the keys every per-run file starts with (the run summary
//! in `state/runs/`, the health record in `state/health/`): which run, when
//! it started and ended, and what stopped it.

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
    pub stopped_by: Option<StopReason>,
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
