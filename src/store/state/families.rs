//! `state/families/<run-id>.json`: what each URL family of each host has
//! yielded (see `crate::frontier::FamilyStats`), so a daily run fetches an
//! author, tag or archive page only where such pages have led to articles.
//!
//! Keyed `"<host> <family>"`. Like `listings/`, one file per run with what
//! that run changed, never rewritten; loading folds them in run order, the
//! later `day` winning, so runs of several machines merge by keeping every file.

use std::collections::BTreeMap;
use std::path::Path;

use super::write_atomic;
use crate::frontier::FamilyStats;
use crate::store::StoreError;

/// The folder of the per-run files, under `state/`.
pub(crate) const FAMILIES_DIR: &str = "families";

/// Every family's record, and what this run changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Families {
    map: BTreeMap<String, FamilyStats>,
    changed: BTreeMap<String, FamilyStats>,
}

/// The key of a host's family.
pub fn key(host: &str, family: &str) -> String {
    format!("{host} {family}")
}

impl Families {
    /// Read every `state/families/*.json` in run order (missing: empty).
    pub(crate) fn load(state_dir: &Path) -> Result<Families, StoreError> {
        let mut out = Families::default();
        for path in super::run_files::json_files(&state_dir.join(FAMILIES_DIR))? {
            let map: Option<BTreeMap<String, FamilyStats>> = super::read_json(
                &path,
                "a URL families map",
                "delete it: the families are then learned again",
            )?;
            for (k, s) in map.unwrap_or_default() {
                match out.map.get(&k) {
                    Some(old) if old.day > s.day => {}
                    _ => {
                        out.map.insert(k, s);
                    }
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&FamilyStats> {
        self.map.get(key)
    }

    /// Change one family's record (kept for this run's file).
    pub(crate) fn update(&mut self, key: &str, f: impl FnOnce(&mut FamilyStats)) {
        let s = self.map.entry(key.to_string()).or_default();
        f(s);
        self.changed.insert(key.to_string(), *s);
    }

    /// Write what this run changed to `state/families/<run-id>.json`.
    pub(crate) fn save(&self, state_dir: &Path, run_id: &str) -> Result<(), StoreError> {
        if self.changed.is_empty() {
            return Ok(());
        }
        let dir = state_dir.join(FAMILIES_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let mut text = serde_json::to_string_pretty(&self.changed).unwrap_or_default();
        text.push('\n');
        write_atomic(&dir.join(format!("{run_id}.json")), text.as_bytes())
    }
}

/// Fold every per-run families file into one, `families/<name>.json`, and
/// remove the others (for `scraper compact`). Returns the files folded.
pub fn compact(state_dir: &Path, name: &str) -> Result<usize, StoreError> {
    let dir = state_dir.join(FAMILIES_DIR);
    let none = state_dir.join("families.json");
    super::run_files::fold(&dir, &none, name, || {
        let all = Families::load(state_dir)?;
        let mut text = serde_json::to_string_pretty(&all.map).unwrap_or_default();
        text.push('\n');
        Ok(text.into_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_runs_win_and_unchanged_runs_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = Families::default();
        f.save(dir.path(), "r1").unwrap();
        assert!(!dir.path().join(FAMILIES_DIR).exists());
        f.update(&key("a.test", "/tag/*"), |s| s.fetched(false, 10));
        f.save(dir.path(), "r1").unwrap();
        let mut g = Families::load(dir.path()).unwrap();
        g.update(&key("a.test", "/tag/*"), |s| s.fetched(false, 11));
        g.save(dir.path(), "r2").unwrap();
        let h = Families::load(dir.path()).unwrap();
        let s = h.get(&key("a.test", "/tag/*")).unwrap();
        assert_eq!((s.fetched, s.day), (2, 11));
        assert_eq!(compact(dir.path(), "c").unwrap(), 2);
        assert_eq!(
            Families::load(dir.path()).unwrap(),
            Families {
                map: h.map.clone(),
                changed: Default::default()
            }
        );
    }
}
