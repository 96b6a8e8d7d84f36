//! The frontier at scale, held to the figures benches/README.md cites: a million
//! queued URLs (~75 bytes, over 10,000 hosts) take at most 90 bytes each by the
//! frontier's own count (77.6 measured) and at most 100 bytes of resident
//! memory each in a process that does only that (97 measured: the allocator's
//! growth steps on top); and pushes far past a bounded queue keep it at its bound.
//! The CPU time per push and per scheduling decision is a benchmark:
//! `cargo bench --bench frontier_scale`.

use std::time::Duration;

use scraper::frontier::{Entry, Frontier, Kind, Origin, Params};

use crate::support::rng::Rng;

/// benches/README.md, "Scale" (and ARCHITECTURE.md): heap bytes per queued URL, by the frontier's count.
const HEAP_PER_QUEUED_URL: f64 = 90.0;
/// The same, as resident memory of a fresh process.
const RSS_PER_QUEUED_URL: f64 = 100.0;
const URLS: usize = 1_000_000;
const HOSTS: usize = 10_000;
/// Set in the child process that measures the queue alone.
const CHILD_ENV: &str = "SCRAPER_TEST_SCALE_CHILD";

/// Resident memory of this process, bytes (Linux).
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A typical article URL: about 75 bytes.
fn url(host: &str, i: usize) -> String {
    format!("https://{host}/2026/12/01/ai-lab-ships-a-new-model-story-{i}")
}

fn params(max_queue: usize) -> Params {
    Params {
        per_host_concurrency: 1,
        min_host_gap: Duration::from_secs(1),
        warmup_pages: 10,
        yield_alpha: 0.1,
        min_host_weight: 0.1,
        max_queue,
        ..Params::default()
    }
}

/// Not a test on its own: the child process of
/// `a_million_queued_urls_take_under_100_bytes_each`, which pushes the URLs
/// (the same workload as `benches/partition.rs` "memory") and prints its figures.
#[test]
#[ignore = "run as a child process by another test"]
fn queue_memory_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let before = rss();
    let mut f = Frontier::new(params(URLS * 2));
    for i in 0..URLS {
        let host = format!("news{}.example.com", i % HOSTS);
        let e = Entry::new(url(&host, i), Kind::Page, Origin::Relevant, 2);
        assert!(f.push(&host, e), "push {i}");
    }
    let grown = rss().saturating_sub(before);
    println!("queued {} rss {grown} heap {}", f.len(), f.heap_bytes());
}

#[test]
fn a_million_queued_urls_take_under_100_bytes_each() {
    let name = format!(
        "{}::queue_memory_child",
        module_path!().split_once("::").unwrap().1
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([&name[..], "--exact", "--ignored", "--nocapture", "--quiet"])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("queued "))
        .unwrap_or_else(|| panic!("no figures from the child:\n{stdout}"));
    let figures: Vec<usize> = line
        .split_whitespace()
        .skip(1)
        .step_by(2)
        .map(|n| n.parse().unwrap())
        .collect();
    let [queued, rss, heap] = figures[..] else {
        panic!("{line}")
    };
    assert_eq!(queued, URLS, "every URL queued");
    let (rss, heap) = (rss as f64 / URLS as f64, heap as f64 / URLS as f64);
    eprintln!("per queued URL: {rss:.1} bytes resident, {heap:.1} bytes by the frontier's count");
    assert!(
        rss <= RSS_PER_QUEUED_URL,
        "{rss:.1} bytes of RSS per queued URL"
    );
    assert!(
        heap <= HEAP_PER_QUEUED_URL,
        "{heap:.1} bytes of heap per queued URL"
    );
    // The URL text alone is ~60 bytes past the host: a count under it is no count.
    assert!(
        heap >= 40.0,
        "{heap:.1} bytes: the frontier's count misses the URL text"
    );
}

#[test]
fn pushes_past_max_queue_keep_it_at_its_bound() {
    let (pushes, max_queue) = (400_000, 120_000);
    let mut f = Frontier::new(params(max_queue));
    let mut rng = Rng::new(2);
    let mut kept = 0u64;
    for i in 0..pushes {
        // Hosts of unequal size (a few prolific ones), origins and depths mixed.
        let h = (rng.below(1000) * rng.below(1000) / 1000) as usize;
        let host = format!("www.site{h:04}-news.example.com");
        let origin = [Origin::Listed, Origin::Relevant, Origin::Other][i % 3];
        let e = Entry::new(url(&host, i), Kind::Page, origin, (i % 4) as u32);
        kept += u64::from(f.push(&host, e));
        assert!(f.len() <= max_queue, "over the bound after push {i}");
    }
    assert_eq!(f.len(), max_queue);
    // Every push past the bound was refused or shed one entry: none is lost uncounted.
    assert_eq!(f.shed(), (pushes - max_queue) as u64);
    assert!(
        kept > max_queue as u64,
        "better entries replace worse ones ({kept} kept)"
    );
    assert_eq!(f.drain().len(), max_queue);
}
