//! Rendering cost (issue 35): `scraper crawl` of 12 static articles against
//! a crawl of 12 application shells whose story a script fetches as JSON
//! (`render: auto`, so the first are read as served and the second
//! rendered in headless Chromium), on 3 hosts each, alternating, in one
//! process so the ratio holds on a noisy machine. Per run: wall and CPU
//! (user + system of the crawler and the browser, from `/usr/bin/time` or
//! the process tree's `/proc` times sampled live, whichever is larger), both per stored page, and the peak memory of the whole
//! process tree (crawler and browser, proportional set size sampled every
//! 50 ms, so shared pages count once).
//!
//! `cargo bench --bench render` (release); `RENDER_BENCH_RUNS` runs of each
//! (default 3). With `static` or `app` as an argument, one crawl of that
//! kind (to time the whole process from outside, e.g. `/usr/bin/time -v`).
//! Needs `chromium` on PATH.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod fixture;
    pub mod web;
}

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use support::fixture::{Workspace, article_html};
use support::web::{Reply, Req, Web};

const HOSTS: usize = 3;
const PER_HOST: usize = 4;

const APP_JS: &str = r#"(async function () {
  var id = location.pathname.split('/').pop();
  var r = await fetch('/api/story/' + id + '.json');
  var d = await r.json();
  var art = document.createElement('article');
  var h = document.createElement('h1'); h.textContent = d.title; art.appendChild(h);
  d.paragraphs.forEach(function (t) { var p = document.createElement('p'); p.textContent = t; art.appendChild(p); });
  document.getElementById('root').appendChild(art);
  document.title = d.title;
})();"#;

/// The JSON of story `n`: the fixture article's paragraphs.
fn story(host: &str, n: usize) -> String {
    let html = article_html(host, n, "2024-05-02");
    let paragraphs: Vec<String> = html
        .split("<p>")
        .skip(1)
        .filter_map(|p| p.split("</p>").next())
        .filter(|p| !p.contains("<a "))
        .map(str::to_string)
        .collect();
    serde_json::json!({"title": format!("A language model story {n} from {host}"), "paragraphs": paragraphs})
        .to_string()
}

fn route(r: &Req) -> Reply {
    let (h, p) = (r.host.as_str(), r.path.as_str());
    if p == "/robots.txt" {
        return Reply::text("User-agent: *\nAllow: /\n");
    }
    if p == "/sitemap.xml" {
        let urls: String = (0..PER_HOST)
            .map(|n| format!("<url><loc>http://{h}/a/{n}</loc></url>"))
            .collect();
        return Reply::xml(format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
        ));
    }
    if h.starts_with("static") {
        if let Some(n) = p.strip_prefix("/a/").and_then(|n| n.parse().ok()) {
            return Reply::html(article_html(h, n, "2024-05-02"));
        }
    } else if h.starts_with("app") {
        if p.starts_with("/a/") {
            return Reply::html(
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>App</title>\
                 <meta property=\"og:type\" content=\"article\"></head><body><div id=\"root\"></div>\
                 <script src=\"/static/app.js\"></script></body></html>",
            );
        }
        if p == "/static/app.js" {
            return Reply::bytes("text/javascript", APP_JS);
        }
        if let Some(n) = p
            .strip_prefix("/api/story/")
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse().ok())
        {
            return Reply::bytes("application/json", story(h, n));
        }
    }
    Reply::not_found()
}

struct Run {
    pages: u64,
    wall: f64,
    cpu: f64,
    peak_mb: f64,
    render_line: Option<String>,
}

fn crawl(web: &Web, kind: &str) -> Run {
    let sources: String = (0..HOSTS)
        .map(|i| {
            format!("  - {{host: {kind}{i}.test, seeds: [http://{kind}{i}.test/sitemap.xml]}}\n")
        })
        .collect();
    let ws = Workspace::new(
        web,
        sources.trim_end(),
        "min_host_gap: 10ms\nrender: {mode: auto, tabs: 2, page_timeout: 15s}",
    );
    let t = Instant::now();
    let child = Command::new("/usr/bin/time")
        .args(["-f", "TIME %e %U %S"])
        .arg(env!("CARGO_BIN_EXE_scraper"))
        .current_dir(ws.dir.path())
        .arg("--config")
        .arg(ws.dir.path().join("config.yml"))
        .args(["crawl", "--data", "data", "--proxy", &ws.proxy])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run /usr/bin/time scraper");
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let tree_cpu = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (done, peak, tree_cpu) = (done.clone(), peak.clone(), tree_cpu.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let (mem, cpu) = scraper::render::browser::tree_usage(Some(pid));
                peak.fetch_max(mem, Ordering::SeqCst);
                tree_cpu.fetch_max(cpu, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let out = child.wait_with_output().expect("wait for the crawl");
    done.store(true, Ordering::SeqCst);
    let _ = sampler.join();
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "crawl failed: {err}");
    let times: Vec<f64> = err
        .lines()
        .find_map(|l| l.strip_prefix("TIME "))
        .expect("/usr/bin/time output")
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    let pages = ws.records().len() as u64;
    assert_eq!(pages, (HOSTS * PER_HOST) as u64, "{kind}: {err}");
    Run {
        pages,
        wall,
        // The browser may end after the crawler stops waiting for it: take
        // the larger of what `time` saw and the tree's CPU sampled live.
        cpu: (times[1] + times[2]).max(tree_cpu.load(Ordering::SeqCst) as f64 / 1000.0),
        peak_mb: peak.load(Ordering::SeqCst) as f64 / 1e6,
        render_line: err
            .lines()
            .find(|l| l.starts_with("Rendered "))
            .map(str::to_string),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("RENDER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // `static` or `app` as an argument: one crawl of that kind, for timing
    // the whole process from outside.
    let only: Option<String> = std::env::args().find(|a| a == "static" || a == "app");
    let web = Web::start(route);
    if let Some(kind) = only {
        let r = crawl(&web, &kind);
        println!(
            "{kind}: {} pages, wall {:.2} s, cpu {:.2} s, peak tree memory {:.0} MB",
            r.pages, r.wall, r.cpu, r.peak_mb
        );
        return;
    }
    let (mut stat, mut rend) = (Vec::new(), Vec::new());
    for i in 0..runs {
        for (kind, all) in [("static", &mut stat), ("app", &mut rend)] {
            let r = crawl(&web, kind);
            println!(
                "run {i} {kind:>6}: {} pages, wall {:.2} s ({:.0} ms/page), cpu {:.2} s ({:.0} ms/page), peak tree memory {:.0} MB",
                r.pages,
                r.wall,
                r.wall * 1000.0 / r.pages as f64,
                r.cpu,
                r.cpu * 1000.0 / r.pages as f64,
                r.peak_mb
            );
            if let Some(l) = &r.render_line {
                println!("           {l}");
            }
            all.push(r);
        }
    }
    let per = |v: &[Run], f: fn(&Run) -> f64| {
        median(v.iter().map(|r| f(r) * 1000.0 / r.pages as f64).collect())
    };
    let (sc, rc) = (per(&stat, |r| r.cpu), per(&rend, |r| r.cpu));
    let (sw, rw) = (per(&stat, |r| r.wall), per(&rend, |r| r.wall));
    let (sm, rm) = (
        median(stat.iter().map(|r| r.peak_mb).collect()),
        median(rend.iter().map(|r| r.peak_mb).collect()),
    );
    println!(
        "median per page: cpu {sc:.0} ms static, {rc:.0} ms rendered ({:.1}x); wall {sw:.0} ms static, {rw:.0} ms rendered ({:.1}x); peak tree memory {sm:.0} MB static, {rm:.0} MB rendering",
        rc / sc,
        rw / sw
    );
}
