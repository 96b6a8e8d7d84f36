//! WARC archiving cost (issue 29): `cargo bench --bench archive`.
//!
//! A local web of 8 hosts x 250 articles of realistic weight (about 35 KB
//! of HTML each: inline style and scripts, a navigation of 120 links, ten
//! paragraphs of varied prose; six hosts send gzip as most servers do, two
//! identity) is crawled to the end by the release binary, once with
//! `archive: none` and once with `archive: articles`, in turn, `RUNS` pairs
//! (default 3). Reported: the CPU seconds of each (wait4), their ratio per
//! pair and its median; the WARC bytes per stored article and against the
//! shard's bytes per article; and the archive of one such run, which is what
//! a day of archives weighs on this web (a daily run of up to 4,000 fetches).
//!
//! `cargo bench --bench archive -- serve DIR` instead starts the web, writes
//! `DIR/on.yml` and `DIR/off.yml`, prints the proxy URL and serves until
//! killed, so an outside timer can run the two crawls itself.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod web;
}

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::web::{Reply, Req, Web};

const HOSTS: usize = 8;
const PER_HOST: usize = 250;

/// Words of varied length and frequency, so the prose compresses as prose does.
const WORDS: &[&str] = &[
    "the",
    "model",
    "of",
    "a",
    "and",
    "to",
    "in",
    "researchers",
    "said",
    "language",
    "training",
    "data",
    "that",
    "is",
    "for",
    "with",
    "on",
    "system",
    "benchmark",
    "results",
    "company",
    "artificial",
    "intelligence",
    "compute",
    "cluster",
    "evaluation",
    "safety",
    "release",
    "open",
    "weights",
    "parameters",
    "reasoning",
    "agents",
    "developers",
    "API",
    "customers",
    "regulators",
    "Europe",
    "inference",
    "chips",
    "GPU",
    "memory",
    "latency",
    "tokens",
    "context",
    "window",
    "fine-tuning",
    "reinforcement",
    "learning",
    "human",
    "feedback",
    "scientists",
    "university",
    "laboratory",
    "paper",
    "published",
    "Thursday",
    "million",
    "billion",
    "dollars",
    "startup",
    "investors",
    "funding",
    "round",
    "valuation",
    "quarter",
    "revenue",
    "growth",
    "percent",
    "users",
    "product",
    "launch",
    "version",
    "update",
    "critics",
    "warned",
    "risks",
    "copyright",
    "lawsuit",
    "publishers",
    "licence",
    "deal",
    "machine",
    "neural",
    "network",
    "architecture",
    "transformer",
    "attention",
    "efficient",
    "smaller",
    "larger",
    "faster",
    "cheaper",
    "accurate",
    "errors",
    "hallucinations",
    "tests",
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn words(&mut self, n: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[(self.next() % WORDS.len() as u64) as usize]);
        }
        s
    }
}

fn article(host: &str, n: usize) -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 * 7919) ^ host.len() as u64);
    let title = format!("OpenAI and DeepMind: {} (story {n})", rng.words(8));
    let style: String = (0..160)
        .map(|i| {
            format!(
                ".c{i}{{margin:{}px;padding:{}px;color:#{:06x}}}\n",
                i % 17,
                i % 9,
                rng.next() % 0xffffff
            )
        })
        .collect();
    let script: String = (0..260)
        .map(|i| {
            format!(
                "window.__d{i}=function(a,b){{return a*{}+b-{};}};\n",
                rng.next() % 1000,
                rng.next() % 97
            )
        })
        .collect();
    let nav: String = (0..120)
        .map(|i| format!("<li><a href=\"/section/{i}\">{}</a></li>", rng.words(2)))
        .collect();
    let paras: String = (0..10)
        .map(|_| {
            format!(
                "<p>The artificial intelligence lab said its large language model {}. Machine learning engineers {}.</p>\n",
                rng.words(60),
                rng.words(30)
            )
        })
        .collect();
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>\
         <meta property=og:type content=article><meta property=article:published_time content=2026-11-30T10:00:00Z>\
         <style>{style}</style><script>{script}</script></head><body><header><nav><ul>{nav}</ul></nav></header>\
         <main><article><h1>{title}</h1>{paras}<p><a href=/s/{}>next</a> <a href=/s/{}>other</a></p></article></main>\
         <footer>{}</footer></body></html>",
        (n + 1) % PER_HOST,
        (n * 7 + 3) % PER_HOST,
        rng.words(40)
    )
}

fn web() -> Web {
    Web::start(|r: &Req| match r.path.as_str() {
        "/robots.txt" => Reply::not_found(),
        "/" => {
            let links: String = (0..PER_HOST)
                .map(|n| format!("<a href=/s/{n}>{n}</a>\n"))
                .collect();
            Reply::html(format!("<html><body>{links}</body></html>"))
        }
        p if p.starts_with("/s/") => {
            let n: usize = p[3..].parse().unwrap_or(0);
            let reply = Reply::html(article(&r.host, n));
            // Six hosts of eight compress, as most servers do.
            if r.host.starts_with("h0") || r.host.starts_with("h1") {
                reply
            } else {
                reply.gzip()
            }
        }
        _ => Reply::not_found(),
    })
}

fn config(path: &Path, archive: &str) {
    let sources: String = (0..HOSTS)
        .map(|h| format!("  - {{host: h{h}.test, seeds: [http://h{h}.test/]}}\n"))
        .collect();
    let text = format!(
        "keywords:\n  targets: [model, training, data, compute, research]\n  strong_targets: [AI, OpenAI, DeepMind, large language model, machine learning, artificial intelligence]\n\
         sources:\n{sources}crawl:\n  concurrency: 16\n  min_host_gap: 1ms\n  archive: {archive}\n  \
         user_agent: \"scraper-bench/0.1 (+http://example.invalid)\"\n"
    );
    std::fs::write(path, text).expect("config");
}

/// Crawl into a fresh `data` folder under `dir`; the child's CPU time (wait4).
// The child is reaped by `wait4`, which clippy does not see.
#[allow(clippy::zombie_processes)]
fn crawl(dir: &Path, config: &Path, proxy: &str) -> Duration {
    let data = dir.join("data");
    let _ = std::fs::remove_dir_all(&data);
    let child = Command::new(env!("CARGO_BIN_EXE_scraper"))
        .arg("--config")
        .arg(config)
        .args(["crawl", "--data"])
        .arg(&data)
        .args(["--proxy", proxy])
        .env("RUST_LOG", "warn")
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn scraper");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4 failed");
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Bytes of the files in `dir` with `suffix`, and the records of the shards.
fn sizes(data: &Path) -> (u64, u64, u64) {
    let bytes = |dir: &Path, suffix: &str| -> u64 {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().ends_with(suffix))
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    };
    let mut records = 0;
    for s in scraper::store::shard::list(&data.join("articles")).expect("shards") {
        scraper::store::shard::read_lines(&s, |_| records += 1).expect("shard");
    }
    (
        bytes(&data.join("warc"), ".warc.gz"),
        bytes(&data.join("articles"), ".jsonl.zst"),
        records,
    )
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let web = web();
    if let Some(i) = args.iter().position(|a| a == "serve") {
        let out = Path::new(args.get(i + 1).expect("serve DIR"));
        std::fs::create_dir_all(out).expect("DIR");
        config(&out.join("on.yml"), "articles");
        config(&out.join("off.yml"), "none");
        println!("{}", web.proxy_url());
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let (on, off) = (dir.path().join("on.yml"), dir.path().join("off.yml"));
    config(&on, "articles");
    config(&off, "none");
    let proxy = web.proxy_url();
    let mut ratios = Vec::new();
    let mut last = (0, 0, 0);
    for i in 0..runs {
        let b = crawl(dir.path(), &off, &proxy);
        let a = crawl(dir.path(), &on, &proxy);
        last = sizes(&dir.path().join("data"));
        let ratio = a.as_secs_f64() / b.as_secs_f64();
        println!(
            "pair {i}: CPU {:.2} s archiving vs {:.2} s not: {ratio:.3}",
            a.as_secs_f64(),
            b.as_secs_f64()
        );
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    let (warc, shard, records) = last;
    let per = |b: u64| b as f64 / records.max(1) as f64;
    println!(
        "CPU with archiving / without, median of {runs} pairs: {:.3}",
        ratios[runs / 2]
    );
    println!(
        "archive: {records} articles stored, WARC {:.1} MB = {:.1} KB per article; shard {:.1} KB per article; WARC / shard {:.1}x",
        warc as f64 / 1e6,
        per(warc) / 1e3,
        per(shard) / 1e3,
        warc as f64 / shard.max(1) as f64
    );
    println!(
        "a day of archives on this web (one run: {} pages of ~35 KB, 2,000 articles): {:.1} MB compressed",
        HOSTS * (PER_HOST + 1),
        warc as f64 / 1e6
    );
}
