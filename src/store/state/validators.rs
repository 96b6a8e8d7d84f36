//! `state/validators.json`: the ETag and Last-Modified a URL last answered
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

use super::{VALIDATORS_FILE, write_atomic};
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
    pub fn with_cap(cap: usize) -> Validators {
        Validators {
            map: BTreeMap::new(),
            cap,
        }
    }

    /// Read `state/validators.json` (missing: empty), keeping at most `cap` URLs.
    pub fn load(state_dir: &Path, cap: usize) -> Result<Validators, StoreError> {
        let path = state_dir.join(VALIDATORS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Validators::with_cap(cap));
            }
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let map = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: path.clone(),
            message: format!("not a validators map ({e}); delete it, it is only a cache"),
        })?;
        Ok(Validators { map, cap })
    }

    pub fn get(&self, url: &str) -> Option<&Validator> {
        self.map.get(url)
    }

    /// Remember a response's validators; one with neither field forgets the URL.
    pub fn set(&mut self, url: &str, v: Validator) {
        if v.etag.is_none() && v.last_modified.is_none() {
            self.map.remove(url);
        } else {
            self.map.insert(url.to_string(), v);
        }
    }

    pub fn remove(&mut self, url: &str) {
        self.map.remove(url);
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

    /// Write `state/validators.json` atomically, trimmed to the cap.
    pub fn save(&mut self, state_dir: &Path) -> Result<(), StoreError> {
        self.trim();
        let mut out = String::with_capacity(self.map.len() * 120 + 4);
        out.push('{');
        for (i, (url, v)) in self.map.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            // Invariant: strings and numbers always serialise.
            out.push_str(&serde_json::to_string(url).expect("a string serialises"));
            out.push_str(": ");
            out.push_str(&serde_json::to_string(v).expect("a Validator serialises"));
        }
        out.push_str("\n}\n");
        write_atomic(&state_dir.join(VALIDATORS_FILE), out.as_bytes())
    }
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
        vals.save(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(VALIDATORS_FILE)).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        let back = Validators::load(dir.path(), 2).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.get("https://a.com/"), Some(&v("W/\"a\"", 7)));
        assert!(back.get("https://b.com/feed").is_none(), "oldest dropped");
        std::fs::write(dir.path().join(VALIDATORS_FILE), "[").unwrap();
        assert!(Validators::load(dir.path(), 2).is_err());
    }
}
