//! Folders of per-run JSON files (`runs/`, `validators/`, `doc_cache/`): one
//! file per run, written once, so runs of several machines merge in git.
//! Listing them, and folding them into one for `scraper compact`.

use std::path::{Path, PathBuf};

use super::{sync_dir, write_atomic};
use crate::store::StoreError;

/// `dir/*.json` in name order (run ids sort by start time); none when the
/// folder does not exist.
pub(in crate::store) fn json_files(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(l) => l
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    files.sort();
    Ok(files)
}

/// Fold the files of `dir` (and the older single file `legacy`, if any) into
/// one, `dir/<name>.json`, holding what `merged` gives (called only when
/// there is something to fold: more than one file, or the legacy one), then
/// remove the others. `name` should sort after the files it replaces. For
/// `scraper compact`, which holds the run lock and is run by one machine at
/// a time. Returns the files folded.
pub(in crate::store) fn fold(
    dir: &Path,
    legacy: &Path,
    name: &str,
    merged: impl FnOnce() -> Result<Vec<u8>, StoreError>,
) -> Result<usize, StoreError> {
    let files = json_files(dir)?;
    if files.len() <= 1 && !legacy.exists() {
        return Ok(0);
    }
    let bytes = merged()?;
    std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let own = dir.join(format!("{name}.json"));
    write_atomic(&own, &bytes)?;
    let mut folded = 0;
    for path in files.iter().map(PathBuf::as_path).chain([legacy]) {
        if path == own {
            continue;
        }
        match std::fs::remove_file(path) {
            Ok(()) => folded += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(path, e)),
        }
    }
    sync_dir(dir).map_err(|e| StoreError::io(dir, e))?;
    Ok(folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_json_files_in_order_and_folds_them_with_the_legacy_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("per_run");
        let legacy = tmp.path().join("legacy.json");
        assert!(json_files(&dir).unwrap().is_empty());
        std::fs::create_dir(&dir).unwrap();
        for name in ["b.json", "a.json", "note.txt", ".b.json.tmp-1-0"] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        let names = |d: &Path| -> Vec<String> {
            json_files(d)
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(&dir), ["a.json", "b.json"]);
        std::fs::write(&legacy, "{}").unwrap();
        let folded = fold(&dir, &legacy, "c", || Ok(b"{\"all\": 1}".to_vec())).unwrap();
        assert_eq!(folded, 3, "a, b and the legacy file");
        assert_eq!(names(&dir), ["c.json"]);
        assert!(!legacy.exists());
        assert_eq!(std::fs::read(dir.join("c.json")).unwrap(), b"{\"all\": 1}");
        // One file and no legacy: nothing to fold, and nothing merged.
        let folded = fold(&dir, &legacy, "d", || panic!("not called")).unwrap();
        assert_eq!(folded, 0);
    }
}
