//! `scraper extract`: saved HTML files (`.gz` too) through the extractor, one
//! JSON object per file on stdout. Part of the binary: the library's
//! `extract` stays free of I/O.

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

use serde_json::json;

use scraper::extract::{extract, to_json};
use scraper::relevance::Rule;

/// Largest decompressed `.gz` input read; the rest is ignored.
const MAX_GZ_BYTES: u64 = 64 << 20;

/// Read a file, un-gzipping `.gz` files.
fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
    {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .take(MAX_GZ_BYTES)
            .read_to_end(&mut out)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// `scraper extract`: one JSON object per path on stdout, in input order.
pub fn run_files(
    config: &scraper::config::Config,
    paths: &[std::path::PathBuf],
    url: Option<&str>,
) -> anyhow::Result<()> {
    let rule = Rule::new(&config.keywords);
    let today = chrono::Utc::now().date_naive();
    let base = match url {
        Some(u) => Some(
            scraper::url::parse(u)
                .ok_or_else(|| anyhow::anyhow!("--url: not an http(s) URL: {u}"))?,
        ),
        None => None,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    for path in paths {
        let shown = path.display().to_string();
        let obj = match read_input(path) {
            Err(e) => json!({"path": shown, "error": e.to_string()}),
            Ok(bytes) => {
                let start = Instant::now();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    extract(&bytes, None, base.as_ref(), &rule, today)
                }));
                let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                match result {
                    Ok(page) => {
                        let mut v = to_json(&shown, &page);
                        if let Some(b) = &base {
                            v["url"] = json!(b.as_str());
                        }
                        v["elapsed_ms"] = json!((elapsed * 1000.0).round() / 1000.0);
                        v
                    }
                    Err(_) => json!({"path": shown, "error": "internal error while extracting"}),
                }
            }
        };
        serde_json::to_writer(&mut out, &obj)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    super::leave(rule);
    Ok(())
}
