//! Which extractor made a record: `extractor_version`, a string that
//! changes whenever the record extracted from the same page can change.
//!
//! It has two parts, `<code>.k<rule>`:
//! - [`CODE`], bumped by hand with every change of the code that can change
//!   what a page extracts to (text, Markdown, title, date, language, byline,
//!   keywords, the relevance score). A test pins the records extracted from
//!   the pages in `tests/fixtures/extract/` (and the fuzz corpus) to a hash
//!   stored with the code version: a change of output without a new
//!   [`CODE`] fails it, so a forgotten bump is caught;
//! - a hash of the `keywords` section of `config.yml`, which decides a
//!   record's `keywords` and `relevance_score` (8 hex digits of xxh3).
//!
//! The build keeps, per id, the record of the highest [`CODE`], and among
//! equal codes the one written last (`scraper reextract` shards sort after
//! crawl shards, and later ones after earlier ones).

use crate::relevance::Keywords;

/// The extraction code's version: bump it (and the pin in the test below)
/// whenever extraction output can change.
pub const CODE: u32 = 8;

/// The `extractor_version` of records extracted under `keywords`.
pub fn version(keywords: &Keywords) -> String {
    let rule = serde_json::to_vec(keywords).unwrap_or_default();
    format!("{CODE}.k{:08x}", xxhash_rust::xxh3::xxh3_64(&rule) as u32)
}

/// The code part of an `extractor_version` (0 for a record without one, or
/// one this version cannot read).
pub fn code_of(version: Option<&str>) -> u32 {
    version
        .and_then(|v| v.split('.').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Provenance;
    use crate::relevance::Rule;

    /// The extractor's code version and the xxh3 of the records it makes
    /// from the fixture pages. When this test fails because the hash changed,
    /// extraction output changed: bump [`CODE`] and put the new pair here.
    const PIN: (u32, u64) = (8, 0x4776_0a4a_f482_8d90);

    fn fixture_records() -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths: Vec<_> = ["tests/fixtures/extract", "fuzz/corpus/extract"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        let keywords = Keywords::default();
        let rule = Rule::new(&keywords);
        let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let url = crate::url::parse("https://tech.example/2026/11/28/story").unwrap();
        let prov = Provenance {
            id: 1,
            fetched_at: "2026-12-01T00:00:00Z".parse().unwrap(),
            ..Provenance::default()
        };
        let mut out = String::new();
        for p in paths {
            let html = std::fs::read(&p).unwrap();
            let page = super::super::extract(&html, None, Some(&url), &rule, today);
            let mut a = super::super::record::article(&page, &url, &prov, "");
            a.extractor_version = None;
            out.push_str(&serde_json::to_string(&a).unwrap());
            out.push_str(&format!(
                " {} {}\n",
                page.is_article, page.relevance.relevant
            ));
        }
        out
    }

    #[test]
    fn extraction_output_is_pinned_to_the_code_version() {
        let records = fixture_records();
        assert!(records.lines().count() >= 10);
        let hash = xxhash_rust::xxh3::xxh3_64(records.as_bytes());
        assert_eq!(
            (CODE, hash),
            PIN,
            "extraction output changed: bump extract::version::CODE and set PIN to \
             ({}, {hash:#x})",
            CODE + u32::from(hash != PIN.1 && CODE == PIN.0)
        );
    }

    #[test]
    fn versions_name_code_and_rule() {
        let k = Keywords::default();
        let v = version(&k);
        assert!(v.starts_with(&format!("{CODE}.k")), "{v}");
        assert_eq!(code_of(Some(&v)), CODE);
        assert_eq!(code_of(None), 0);
        assert_eq!(code_of(Some("junk")), 0);
        let mut other = k.clone();
        other.targets.push("quantum annealing".into());
        assert_ne!(version(&other), v);
        assert_eq!(version(&k), v);
    }
}
