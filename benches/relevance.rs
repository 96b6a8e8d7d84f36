//! Relevance benchmark: what the judgement costs on every page, as a share of
//! extracting that page, measured in the same run on the same pages.
//!
//! `cargo bench --bench relevance` reads the HTML pages listed in
//! `../shared/eval/manifest.json` (`RELEVANCE_BENCH_EVAL` to point elsewhere),
//! extracts each once (parse, text, dates, relevance), then times
//! `Rule::is_relevant` and `Rule::evaluate` on the extracted title and text,
//! and `Rule::hint` on the titles. Figures: milliseconds per 1,000 pages and
//! each as a share of extraction.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use scraper::config::Config;
use scraper::extract;
use scraper::relevance::Rule;

fn read(path: &Path) -> Option<Vec<u8>> {
    let raw = std::fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .ok()?;
        Some(out)
    } else {
        Some(raw)
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let eval = std::env::var_os("RELEVANCE_BENCH_EVAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/eval"));
    let Ok(manifest) = std::fs::read_to_string(eval.join("manifest.json")) else {
        println!(
            "relevance bench: {} not found, nothing to measure",
            eval.display()
        );
        return;
    };
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("manifest");
    let mut pages: Vec<Vec<u8>> = manifest["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter_map(|c| c["html"].as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|p| read(&eval.join(p)))
        .collect();
    pages.truncate(2000);
    let config = Config::load(&root.join("config.yml")).expect("config.yml");
    let rule = Rule::new(&config.keywords);
    let today = chrono::Utc::now().date_naive();

    let t = Instant::now();
    let docs: Vec<(String, String)> = pages
        .iter()
        .map(|html| {
            let p = extract::extract(html, None, None, &rule, today);
            (p.title.unwrap_or_default(), p.text)
        })
        .collect();
    let extract_s = t.elapsed().as_secs_f64();
    let bytes: usize = docs.iter().map(|(a, b)| a.len() + b.len()).sum();

    let rounds: u32 = 5;
    let time = |f: &dyn Fn(&str, &str) -> bool| {
        let t = Instant::now();
        let mut n = 0usize;
        for _ in 0..rounds {
            for (title, text) in &docs {
                n += usize::from(f(title, text));
            }
        }
        (
            t.elapsed().as_secs_f64() / f64::from(rounds),
            n / rounds as usize,
        )
    };
    let (verdict_s, relevant) = time(&|a, b| rule.is_relevant(a, b));
    let (evaluate_s, _) = time(&|a, b| rule.evaluate(a, b).relevant);
    let (hint_s, _) = time(&|a, _| rule.hint(a) > 0.0);
    let per_k = |s: f64| s * 1000.0 / docs.len() as f64 * 1000.0;
    println!(
        "relevance bench: {} pages, {:.1} MB of extracted text, {relevant} relevant",
        docs.len(),
        bytes as f64 / 1e6
    );
    println!(
        "  extract (baseline)  {:8.1} ms per 1,000 pages",
        per_k(extract_s)
    );
    for (name, s) in [
        ("is_relevant", verdict_s),
        ("evaluate", evaluate_s),
        ("hint (titles)", hint_s),
    ] {
        println!(
            "  {name:<19} {:8.1} ms per 1,000 pages  {:5.1}% of extract",
            per_k(s),
            100.0 * s / extract_s
        );
    }
}
