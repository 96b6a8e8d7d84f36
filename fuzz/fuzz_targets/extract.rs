//! Fuzz target: any bytes through the extractor must give a `Page`, never a
//! panic or a stack overflow. Run (stable toolchain):
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run extract corpus/extract -- -max_total_time=60`.
//! Interesting inputs belong in `corpus/extract/`, which `cargo test` replays
//! (`tests/it/extraction/pages.rs`, `fuzz_corpus_replays`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scraper::config::Keywords;
use scraper::relevance::Rule;

fuzz_target!(|data: &[u8]| {
    let keywords = Keywords {
        targets: vec!["ai".into(), "model".into()],
        strong_targets: vec!["AI".into(), "large language model".into(), "GPT-4o".into()],
        ..Keywords::default()
    };
    let rule = Rule::new(&keywords);
    let today = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("valid date");
    let url = scraper::url::parse("https://example.com/2024/03/04/story");
    let _ = scraper::extract::extract(data, None, url.as_ref(), &rule, today);
});
