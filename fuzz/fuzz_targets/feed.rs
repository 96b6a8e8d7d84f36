//! Fuzz target: feed sniffing and parsing never panic and stay within their limits.
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run feed ../tests/fixtures/fuzz/feed -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use scraper::discover::{self, Kind, Limits};

fuzz_target!(|data: &[u8]| {
    let Some(base) = scraper::url::parse("https://example.com/feed.xml") else { return };
    let limits = Limits { max_urls: 1000, max_decoded_bytes: 1 << 20 };
    let _ = discover::sniff(&base, None, data);
    let _ = discover::parse(Kind::Feed, &base, data, &limits);
});
