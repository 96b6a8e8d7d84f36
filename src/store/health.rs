//! `state/health/<run-id>.json`: what each run saw of each source (one file
//! per run, so runs from several machines merge in git without conflict).
//! Written once at the end of a run; `scraper health` reads the latest.

use std::path::{Path, PathBuf};

use super::StoreError;
use super::state::write_atomic;
use crate::health::{FILES_PER_RUN, RunHealth};

/// The folder inside `state/`.
pub(crate) const HEALTH_DIR: &str = "health";

/// Write this run's file atomically (pretty JSON, stable key order).
pub fn save(state_dir: &Path, run: &RunHealth) -> Result<PathBuf, StoreError> {
    let dir = state_dir.join(HEALTH_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let path = dir.join(format!("{}.json", run.run.run_id));
    // Invariant: strings, numbers and maps with string keys always serialise.
    let mut text = serde_json::to_vec_pretty(run).expect("a RunHealth always serialises");
    text.push(b'\n');
    write_atomic(&path, &text)?;
    Ok(path)
}

/// The latest `window` runs' files, oldest first, and the names of files
/// that could not be read (skipped, never fatal).
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub runs: Vec<RunHealth>,
    pub unreadable: Vec<String>,
}

/// Read the latest `window` health files (run ids sort by start time).
pub(crate) fn load_recent(state_dir: &Path, window: usize) -> Result<Loaded, StoreError> {
    let dir = state_dir.join(HEALTH_DIR);
    let names: Vec<String> = super::state::run_files::json_files(&dir)?
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .collect();
    let mut out = Loaded::default();
    // Names sort by start second only: runs that started in the same second
    // as the oldest one kept are all read, then ordered by their exact start.
    let mut boundary: Option<String> = None;
    for name in names.iter().rev() {
        let second = name.split('-').next().unwrap_or(name);
        if out.runs.len() >= window && boundary.as_deref() != Some(second) {
            break;
        }
        if out.runs.len() < window {
            boundary = Some(second.to_string());
        }
        let path = dir.join(name);
        match std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<RunHealth>(&b).map_err(|e| e.to_string()))
        {
            Ok(run) => out.runs.push(run),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unreadable health file skipped");
                out.unreadable.push(name.clone());
            }
        }
    }
    out.runs
        .sort_by(|a, b| (a.run.started_at, &a.run.run_id).cmp(&(b.run.started_at, &b.run.run_id)));
    let extra = out.runs.len().saturating_sub(window);
    out.runs.drain(..extra);
    Ok(out)
}

/// The configured `sources` judged over the health files of their window
/// (`health.window` runs, [`FILES_PER_RUN`] files a run): what `scraper
/// health` prints and the dashboard's health panel shows.
pub fn report(
    state_dir: &Path,
    sources: &[crate::source::Source],
    health: &crate::health::Health,
) -> Result<crate::health::Report, StoreError> {
    let loaded = load_recent(state_dir, health.window * FILES_PER_RUN)?;
    Ok(crate::health::Report::new(
        sources,
        health,
        &loaded.runs,
        loaded.unreadable,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn save_then_load_latest_skipping_broken_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_recent(dir.path(), 5).unwrap().runs.is_empty());
        for i in 0..4 {
            let mut r = RunHealth::new(&format!("2026010{i}T000000Z-abcd"), Utc::now());
            r.sources.entry("s.test".into()).or_default().requests = i;
            save(dir.path(), &r).unwrap();
        }
        std::fs::write(
            dir.path()
                .join(HEALTH_DIR)
                .join("20260109T000000Z-ffff.json"),
            "{",
        )
        .unwrap();
        let loaded = load_recent(dir.path(), 2).unwrap();
        assert_eq!(
            loaded.unreadable,
            vec!["20260109T000000Z-ffff.json".to_string()]
        );
        let ids: Vec<&str> = loaded.runs.iter().map(|r| r.run.run_id.as_str()).collect();
        assert_eq!(ids, ["20260102T000000Z-abcd", "20260103T000000Z-abcd"]);
        assert_eq!(loaded.runs[1].sources["s.test"].requests, 3);
    }

    #[test]
    fn runs_started_in_one_second_are_ordered_by_their_exact_start() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-05T00:00:00.100Z")
            .unwrap()
            .with_timezone(&Utc);
        // Suffixes sort against the start times: ffff started first.
        let runs = [
            ("20260104T000000Z-0000", t0 - chrono::Duration::days(1)),
            ("20260105T000000Z-ffff", t0),
            (
                "20260105T000000Z-aaaa",
                t0 + chrono::Duration::milliseconds(300),
            ),
            (
                "20260105T000000Z-0001",
                t0 + chrono::Duration::milliseconds(600),
            ),
        ];
        for (id, at) in runs {
            save(dir.path(), &RunHealth::new(id, at)).unwrap();
        }
        let ids = |n| {
            load_recent(dir.path(), n)
                .unwrap()
                .runs
                .iter()
                .map(|r| r.run.run_id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(2), ["20260105T000000Z-aaaa", "20260105T000000Z-0001"]);
        assert_eq!(
            ids(3),
            [
                "20260105T000000Z-ffff",
                "20260105T000000Z-aaaa",
                "20260105T000000Z-0001"
            ]
        );
        assert_eq!(ids(9).len(), 4);
    }
}
