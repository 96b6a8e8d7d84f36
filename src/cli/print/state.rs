//! What the commands that rewrite `data/` print: `scraper compact`,
//! `scraper renumber` and `scraper reextract`.

use scraper::reextract::Summary;
use scraper::store::renumber::Renumbered;
use scraper::store::seen::CompactReport;

/// The seen-set part of `scraper compact`.
pub fn compacted(r: &CompactReport) {
    println!(
        "compacted {} seen-set files ({} records, {} bytes) into {} files ({} URLs, {} bytes)",
        r.files,
        r.records_in,
        r.bytes_in,
        r.paths.len(),
        r.records_out,
        r.bytes_out
    );
}

/// `folded N <what> files into state/<to>.json`, when any were folded.
pub fn folded(n: usize, what: &str, to: &str) {
    if n > 0 {
        println!("folded {n} {what} files into state/{to}.json");
    }
}

/// `scraper renumber`: the new ids, and what was dropped on the way.
pub fn renumbered(r: &Renumbered) {
    let old = r
        .old
        .map_or("none".to_string(), |(lo, hi)| format!("{lo}..={hi}"));
    println!(
        "renumbered {} records of {}: ids {}..={} (were {old}); next_id is now {}",
        r.records,
        r.path.display(),
        r.start,
        r.start + r.records as i64 - 1,
        r.start + r.records as i64
    );
    if r.bad_lines + r.bad_frames + r.dropped_bytes > 0 {
        eprintln!(
            "dropped: {} lines that were not JSON objects, {} corrupt frames, {} bytes of torn tail",
            r.bad_lines, r.bad_frames, r.dropped_bytes
        );
    }
}

/// The one-line report of `scraper reextract`.
pub fn reextracted(s: &Summary) {
    println!(
        "reextract: {} WARC file(s) ({} with a torn tail), {} records; {} unchanged, \
         {} written ({} no longer an article, {} no longer relevant, {} paywalled), \
         {} unreadable; extractor {}{}",
        s.files,
        s.torn_files,
        s.records,
        s.unchanged,
        s.written,
        s.withdrawn_not_article,
        s.withdrawn_not_relevant,
        s.withdrawn_paywalled,
        s.unreadable,
        s.version,
        s.shard
            .as_ref()
            .map(|p| format!("; shard {}", p.display()))
            .unwrap_or_default()
    );
}
