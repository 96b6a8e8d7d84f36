//! Fuzz target: robots.txt parsing and matching never panic.
//! `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run robots ../tests/fixtures/fuzz/robots -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use scraper::net::Robots;

fuzz_target!(|data: &[u8]| {
    let robots = Robots::parse(data, "scraper", 200);
    for p in ["https://example.com/", "https://example.com/private/x", "https://example.com/a?b=c"] {
        if let Some(u) = scraper::url::parse(p) {
            let _ = robots.allowed(&u);
        }
    }
});
