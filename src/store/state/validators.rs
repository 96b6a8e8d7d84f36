//! `state/validators/<run-id>.json` (and the legacy `state/validators.json`,
//! read only): the ETag and Last-Modified a URL last answered
//! with, so the next request can be conditional (`If-None-Match`,
//! `If-Modified-Since`) and a `304` costs no body. Worth it for the pages that
//! are fetched again (seeds, feeds, sitemaps, listing pages), not for stored
//! articles, which are never refetched.
//!
//! The file is a JSON object keyed by URL, sorted, one URL per line, so git
//! diffs stay small; it is bounded ([`Validators::with_cap`]): past the cap
//! the entries used least recently are dropped on save.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{VALIDATORS_DIR, VALIDATORS_FILE, write_atomic};
use crate::store::StoreError;

/// What a response said about its version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validator {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Day stamp (see [`crate::store::seen::day_stamp`]) of the last response.
    #[serde(default)]
    pub day: u32,
}

/// The validators of all remembered URLs.
#[derive(Debug, Clone, PartialEq)]
pub struct Validators {
    map: BTreeMap<String, Validator>,
    cap: usize,
    /// What this run set or forgot (a forgotten URL: neither field): the
    /// content of its `validators/<run-id>.json`.
    changed: BTreeMap<String, Validator>,
}

impl Default for Validators {
    fn default() -> Self {
        Validators::with_cap(Validators::DEFAULT_CAP)
    }
}

impl Validators {
    /// Entries kept by default (about 1.5 MB of JSON).
    pub const DEFAULT_CAP: usize = 10_000;

    /// An empty set keeping at most `cap` URLs.
    pub(crate) fn with_cap(cap: usize) -> Validators {
        Validators {
            map: BTreeMap::new(),
            cap,
            changed: BTreeMap::new(),
        }
    }

    /// Read the legacy `state/validators.json`, then every
    /// `state/validators/*.json` in name (run) order: of two entries for one
    /// URL the later day wins (on a tie, the later file), and a later file's
    /// "forget" (neither field) removes the URL. Missing: empty. At most
    /// `cap` URLs are kept (the least recently answered go).
    pub fn load(state_dir: &Path, cap: usize) -> Result<Validators, StoreError> {
        let mut out = Validators::with_cap(cap);
        if let Some(map) = read_map(&state_dir.join(VALIDATORS_FILE))? {
            out.map = map;
        }
        for path in super::run_files::json_files(&state_dir.join(VALIDATORS_DIR))? {
            if let Some(map) = read_map(&path)? {
                out.fold(map);
            }
        }
        out.map
            .retain(|_, v| v.etag.is_some() || v.last_modified.is_some());
        out.trim();
        Ok(out)
    }

    fn fold(&mut self, map: BTreeMap<String, Validator>) {
        for (url, v) in map {
            let forget = v.etag.is_none() && v.last_modified.is_none();
            match self.map.get(&url) {
                Some(old) if !forget && old.day > v.day => {}
                _ => {
                    self.map.insert(url, v);
                }
            }
        }
    }

    pub fn get(&self, url: &str) -> Option<&Validator> {
        self.map.get(url)
    }

    /// Remember a response's validators; one with neither field forgets the URL.
    pub fn set(&mut self, url: &str, v: Validator) {
        if v.etag.is_none() && v.last_modified.is_none() {
            self.map.remove(url);
        } else {
            self.map.insert(url.to_string(), v.clone());
        }
        self.changed.insert(url.to_string(), v);
    }

    pub fn remove(&mut self, url: &str) {
        self.set(url, Validator::default());
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Drop the least recently used entries beyond the cap (ties: by URL).
    fn trim(&mut self) {
        if self.map.len() <= self.cap {
            return;
        }
        let mut by_age: Vec<(u32, &String)> = self.map.iter().map(|(k, v)| (v.day, k)).collect();
        by_age.sort_unstable();
        let drop: Vec<String> = by_age[..self.map.len() - self.cap]
            .iter()
            .map(|(_, k)| (*k).clone())
            .collect();
        for k in drop {
            self.map.remove(&k);
        }
    }

    /// Write what this run changed to `state/validators/<run-id>.json`
    /// (nothing when it changed nothing). A file is written once and never
    /// changed or removed by a run, so runs from the same state, on any
    /// number of machines, merge in git by simply keeping every file; the
    /// load above folds them. `scraper compact` folds them into one file
    /// (see [`compact`]). The legacy `validators.json` is only read.
    pub fn save(&mut self, state_dir: &Path, run_id: &str) -> Result<(), StoreError> {
        if self.changed.is_empty() {
            return Ok(());
        }
        let dir = state_dir.join(VALIDATORS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        write_atomic(
            &dir.join(format!("{run_id}.json")),
            render(&self.changed).as_bytes(),
        )
    }
}

/// One URL per line, sorted, so git diffs stay small (also the listings'
/// files, `super::listings`).
pub(super) fn render<T: Serialize>(map: &BTreeMap<String, T>) -> String {
    let mut out = String::with_capacity(map.len() * 120 + 4);
    out.push('{');
    for (i, (url, v)) in map.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        // Invariant: strings and numbers always serialise.
        out.push_str(&serde_json::to_string(url).expect("a string serialises"));
        out.push_str(": ");
        out.push_str(&serde_json::to_string(v).expect("a state entry serialises"));
    }
    out.push_str("\n}\n");
    out
}

/// Fold every per-run validators file (and the legacy `validators.json`)
/// into one, `validators/<name>.json`, named to sort after the files it
/// replaces, and remove them. For `scraper compact`, which holds the run lock
/// and is run by one machine at a time. Returns the files folded.
pub fn compact(state_dir: &Path, name: &str, cap: usize) -> Result<usize, StoreError> {
    let dir = state_dir.join(VALIDATORS_DIR);
    super::run_files::fold(&dir, &state_dir.join(VALIDATORS_FILE), name, || {
        let all = Validators::load(state_dir, cap)?;
        Ok(render(&all.map).into_bytes())
    })
}

/// One validators map; `None` when the file does not exist.
fn read_map(path: &Path) -> Result<Option<BTreeMap<String, Validator>>, StoreError> {
    super::read_json(path, "a validators map", "delete it, it is only a cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(etag: &str, day: u32) -> Validator {
        Validator {
            etag: Some(etag.into()),
            last_modified: None,
            day,
        }
    }

    #[test]
    fn round_trip_one_line_per_url_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut vals = Validators::load(dir.path(), 2).unwrap();
        assert!(vals.is_empty());
        vals.set("https://b.com/feed", v("\"b\"", 5));
        vals.set("https://a.com/", v("W/\"a\"", 7));
        vals.set("https://c.com/", v("c", 6));
        vals.set("https://d.com/", Validator::default());
        vals.save(dir.path(), "r1").unwrap();
        let text = std::fs::read_to_string(dir.path().join("validators/r1.json")).unwrap();
        // The run's changes, one per line; d.com forgotten (neither field).
        assert_eq!(text.lines().count(), 6, "{text}");
        let back = Validators::load(dir.path(), 2).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.get("https://a.com/"), Some(&v("W/\"a\"", 7)));
        assert!(back.get("https://b.com/feed").is_none(), "oldest dropped");
        std::fs::write(dir.path().join("validators/r1.json"), "[").unwrap();
        assert!(Validators::load(dir.path(), 2).is_err());
    }

    #[test]
    fn runs_from_one_state_merge_and_compaction_folds_them() {
        let dir = tempfile::tempdir().unwrap();
        let st = dir.path();
        // Legacy file, read only.
        std::fs::write(
            st.join(VALIDATORS_FILE),
            r#"{"https://old.com/": {"etag": "o", "day": 1}, "https://a.com/": {"etag": "a0", "day": 1}, "https://gone.com/": {"etag": "g", "day": 1}}"#,
        )
        .unwrap();
        // Two runs start from that state (two partitions, or a laptop and an Action).
        let mut one = Validators::load(st, 100).unwrap();
        let mut two = Validators::load(st, 100).unwrap();
        one.set("https://a.com/", v("a1", 3));
        two.set("https://b.com/", v("b2", 3));
        two.remove("https://gone.com/");
        one.save(st, "20261201T010000Z-aaaa").unwrap();
        two.save(st, "20261201T010000Z-bbbb").unwrap();
        let mut idle = Validators::load(st, 100).unwrap();
        idle.save(st, "20261201T020000Z-cccc").unwrap();
        let names = |st: &Path| {
            let mut n: Vec<String> = std::fs::read_dir(st.join(VALIDATORS_DIR))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        assert_eq!(
            names(st),
            ["20261201T010000Z-aaaa.json", "20261201T010000Z-bbbb.json"],
            "each run adds only its own changes; a run that changed nothing writes nothing"
        );
        let next = Validators::load(st, 100).unwrap();
        assert_eq!(
            next.get("https://a.com/"),
            Some(&v("a1", 3)),
            "later day wins"
        );
        assert_eq!(next.get("https://b.com/"), Some(&v("b2", 3)));
        assert_eq!(next.get("https://old.com/"), Some(&v("o", 1)));
        assert_eq!(next.get("https://gone.com/"), None, "a later forget wins");
        assert_eq!(compact(st, "20261202T000000Z-compact", 100).unwrap(), 3);
        assert_eq!(names(st), ["20261202T000000Z-compact.json"]);
        assert!(!st.join(VALIDATORS_FILE).exists());
        assert_eq!(Validators::load(st, 100).unwrap(), next);
    }
}
