//! `state/health/<run-id>.json`: what each run saw of each source (one file
//! per run, so runs from several machines merge in git without conflict).
//! Written once at the end of a run; `scraper health` reads the latest.

use std::path::{Path, PathBuf};

use super::StoreError;
use super::state::write_atomic;
use crate::health::RunHealth;

/// The folder inside `state/`.
pub const HEALTH_DIR: &str = "health";

/// Write this run's file atomically (pretty JSON, stable key order).
pub fn save(state_dir: &Path, run: &RunHealth) -> Result<PathBuf, StoreError> {
    let dir = state_dir.join(HEALTH_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let path = dir.join(format!("{}.json", run.run_id));
    // Invariant: strings, numbers and maps with string keys always serialise.
    let mut text = serde_json::to_vec_pretty(run).expect("a RunHealth always serialises");
    text.push(b'\n');
    write_atomic(&path, &text)?;
    Ok(path)
}

/// The latest `window` runs' files, oldest first, and the names of files
/// that could not be read (skipped, never fatal).
#[derive(Debug, Default)]
pub struct Loaded {
    pub runs: Vec<RunHealth>,
    pub unreadable: Vec<String>,
}

/// Read the latest `window` health files (run ids sort by start time).
pub fn load_recent(state_dir: &Path, window: usize) -> Result<Loaded, StoreError> {
    let dir = state_dir.join(HEALTH_DIR);
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(StoreError::io(&dir, e)),
    };
    names.sort();
    let mut out = Loaded::default();
    for name in names.iter().rev() {
        if out.runs.len() >= window {
            break;
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
    out.runs.reverse();
    Ok(out)
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
        let ids: Vec<&str> = loaded.runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(ids, ["20260102T000000Z-abcd", "20260103T000000Z-abcd"]);
        assert_eq!(loaded.runs[1].sources["s.test"].requests, 3);
    }
}
