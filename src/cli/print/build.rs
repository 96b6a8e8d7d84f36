//! What `scraper build` prints: one line of counts on stdout, or why
//! `--strict` wrote nothing on stderr.

use scraper::dataset::Summary;

/// The one-line report of a build that wrote its files.
pub fn show(s: &Summary) {
    let r = &s.removed;
    println!(
        "build: {} shards, {} good records, {} broken; removed {} older versions, {} by relevance, {} same URL, \
         {} same text, {} near-duplicate text, {} repeated id; wrote {} rows in {} file(s), {:.1} MB, to {} in {:.1} s",
        s.reports.len(),
        s.read,
        s.broken,
        r.updated,
        r.relevance,
        r.same_url,
        r.same_text,
        r.near_text,
        r.same_id,
        s.rows,
        s.files.len(),
        s.file_bytes as f64 / 1e6,
        s.data_dir.display(),
        s.secs
    );
}

/// `--strict` found broken input: nothing was written.
pub fn strict_failed(s: &Summary) {
    eprintln!(
        "build: --strict: {} broken lines, frames or shards (see the warnings above); nothing written",
        s.broken
    );
}
