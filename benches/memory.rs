//! Memory benchmark (issue 16): peak RSS of `scraper crawl` on a hostile web
//! with 16 fetches in flight, measured by `/usr/bin/time -v`, with the body
//! budget (`max_body_bytes_in_flight`, default 32 MiB) against the same run
//! without it (`0`), in the same process, so the ratio is fair on a noisy
//! machine.
//!
//! The web: 12 hosts whose pages never end (no Content-Length, cut at the
//! 8 MiB raw cap), 6 hosts serving 1 GiB gzip bombs (cut at the 16 MiB
//! decoded cap), 2 hosts announcing 50 MB, a calendar trap, a session-id
//! trap, and a healthy news host. `MEMORY_BENCH_LARGE=1` adds 2 hosts with
//! 6 MB pages under the caps, which are parsed: parsing memory (several
//! times the page) is outside the body budget, and that run shows it.
//!
//! `cargo bench --bench memory` (release), or `cargo bench --profile dev
//! --bench memory` for a debug build. Prints one line per run and the ratio.

#[path = "../tests/it"]
#[allow(dead_code)]
mod support {
    pub mod fixture;
    pub mod web;
}

use std::process::Command;
use std::time::Instant;

use support::fixture::{
    ARTICLES, Workspace, article_html, article_path, calendar_links, listing_html, news_web_with,
};
use support::web;
use support::web::{Reply, Req};

fn hostile(r: &Req) -> Option<Reply> {
    if r.path == "/robots.txt" {
        return None;
    }
    let h = r.host.as_str();
    let p = r.path.as_str();
    let home = |links: Vec<String>| Some(Reply::html(listing_html("Home", &links)));
    if h.starts_with("endless") {
        return Some(Reply::endless("text/html"));
    }
    if h.starts_with("bomb") {
        return Some(Reply::gzip_bomb("text/html", 1 << 30));
    }
    if h.starts_with("big") {
        return Some(Reply::html("").repeat(vec![b'x'; 1 << 20], Some(50)));
    }
    if h.starts_with("large") {
        // A 6 MB article: under every cap, so it is read and parsed.
        let para = "<p>The artificial intelligence lab said its large language model, trained with machine learning on a cluster, beats earlier AI systems.</p>\n";
        let body = article_html(h, 1, "2024-05-02").replace(
            "</article>",
            &format!("{}</article>", para.repeat(6_000_000 / para.len())),
        );
        return Some(Reply::html(body));
    }
    if h == "cal.test" {
        return calendar_links(p).map_or_else(|| Some(Reply::not_found()), home);
    }
    if h == "sess.test" {
        let n: u64 = p
            .rsplit("jsessionid=")
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        return home(vec![format!("/s;jsessionid={}", n + 1)]);
    }
    None
}

fn hosts() -> Vec<String> {
    let mut v = Vec::new();
    v.extend((0..12).map(|i| format!("endless{i}.test")));
    v.extend((0..6).map(|i| format!("bomb{i}.test")));
    v.extend((0..2).map(|i| format!("big{i}.test")));
    if std::env::var_os("MEMORY_BENCH_LARGE").is_some() {
        v.extend((0..2).map(|i| format!("large{i}.test")));
    }
    v.extend(["cal.test".to_string(), "sess.test".to_string()]);
    v
}

/// Peak RSS in KiB and wall time of one crawl with the given budget.
fn run(budget: u64) -> (u64, f64, u64) {
    let web = news_web_with(hostile);
    let mut sources = String::from("  - {host: news.test, seeds: [http://news.test/]}");
    for h in hosts() {
        sources.push_str(&format!("\n  - {{host: {h}, seeds: [http://{h}/]}}"));
    }
    let ws = Workspace::new(
        &web,
        &sources,
        &format!(
            "concurrency: 16\nmin_host_gap: 10ms\nrequest_timeout: 20s\nread_timeout: 10s\nmax_body_bytes_in_flight: {budget}"
        ),
    );
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_scraper"))
        .current_dir(ws.dir.path())
        .arg("--config")
        .arg(ws.dir.path().join("config.yml"))
        .args([
            "crawl",
            "--data",
            "data",
            "--proxy",
            &ws.proxy,
            "--max-duration",
            "60s",
        ])
        .env("RUST_LOG", "warn")
        .output()
        .expect("run /usr/bin/time -v scraper");
    let secs = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "crawl failed: {err}");
    let kb = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse().ok())
        .expect("/usr/bin/time -v reports the peak RSS");
    let stored = ws.records().len() as u64;
    (kb, secs, stored)
}

fn main() {
    println!(
        "hostile web: {} hostile hosts + news.test ({ARTICLES} articles at e.g. {}), 16 in flight",
        hosts().len(),
        article_path(0)
    );
    let (base_kb, base_s, base_stored) = run(0);
    println!(
        "no budget (max_body_bytes_in_flight: 0): peak RSS {:.1} MiB, {base_s:.1} s, {base_stored} stored",
        base_kb as f64 / 1024.0
    );
    let (kb, s, stored) = run(32 << 20);
    println!(
        "budget 32 MiB (the default):             peak RSS {:.1} MiB, {s:.1} s, {stored} stored",
        kb as f64 / 1024.0
    );
    println!(
        "peak RSS with the budget / without: {:.2}; target: at most 128 MiB ({})",
        kb as f64 / base_kb as f64,
        if kb <= 128 * 1024 { "met" } else { "NOT met" }
    );
    // Waiting for budget must not cost much time: large bodies used to wait
    // on each other until their read timeouts.
    println!("wall time with the budget / without: {:.2}", s / base_s);
}
