//! Fuzz target: URL normalisation never panics and is idempotent.
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run url ../tests/fixtures/fuzz/url -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use scraper::url;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(u) = url::parse(&text) {
        assert_eq!(url::parse(u.as_str()), Some(u.clone()));
        let _ = url::seen_hash(&u);
    }
    if let Some(base) = url::parse("https://example.com/a/b") {
        let _ = url::resolve(&base, &text);
    }
});
