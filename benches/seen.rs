//! Seen-set benchmark: load time and memory for millions of URLs, lookup and
//! record rates, flush and compaction cost.
//!
//! `cargo bench --bench seen` (10 million URLs; `SEEN_BENCH_N=1000000` for fewer).
//! Files go to a temporary folder (about 0.5 GB at 10 million).

use std::path::Path;
use std::time::Instant;

use scraper::store::seen::{self, Seen, SeenSet, flag};

/// A fast deterministic stream of well-mixed 64-bit values.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn write_legacy(path: &Path, n: usize, rng: &mut SplitMix) {
    let mut buf = Vec::with_capacity(n * 16);
    for _ in 0..n {
        buf.extend_from_slice(&rng.next().to_le_bytes());
        buf.extend_from_slice(&20_000u32.to_le_bytes());
        buf.extend_from_slice(&flag::MISS.to_le_bytes());
    }
    std::fs::write(path, buf).expect("write legacy seen.bin");
}

/// CPU seconds used by the process so far (user + system; Linux only, 10 ms
/// resolution). On a shared machine wall time overstates the cost, CPU time
/// does not.
fn cpu_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn timed<T>(label: &str, f: impl FnOnce() -> T) -> T {
    let (t, c) = (Instant::now(), cpu_s());
    let out = f();
    println!(
        "{label:<50} {:>7.3} s wall {:>7.3} s cpu",
        t.elapsed().as_secs_f64(),
        cpu_s() - c
    );
    out
}

fn report_set(set: &SeenSet) {
    let rss = rss_kib().map_or("n/a".into(), |k| format!("{} MiB", k / 1024));
    println!(
        "  {} URLs, heap {:.1} bytes/URL, process RSS {rss}",
        set.len(),
        set.heap_bytes() as f64 / set.len().max(1) as f64,
    );
}

fn main() {
    let n: usize = std::env::var("SEEN_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let tmp = tempfile::tempdir().expect("temp dir");
    let st = tmp.path();
    let mut rng = SplitMix(42);
    println!("seen-set benchmark, {n} URLs");

    // 1. The worst case: an unsorted legacy file (needs a full sort).
    write_legacy(&st.join("seen.bin"), n, &mut rng);
    let set = timed("load: legacy unsorted seen.bin", || SeenSet::load(st)).expect("load");
    report_set(&set);
    drop(set);

    // 2. Compact it, then add 30 daily segments of 5,000 URLs each.
    let report = timed("compact: legacy -> compact-*.bin", || {
        seen::compact(st, "20261101T063000Z-0000")
    })
    .expect("compact");
    println!(
        "  {} records in, {} out, {} bytes",
        report.records_in, report.records_out, report.bytes_out
    );
    let mut daily = Vec::new();
    for day in 0..30u32 {
        let mut set = SeenSet::default();
        for _ in 0..5_000 {
            set.record(rng.next(), Seen::new(20_400 + day, flag::HIT));
        }
        let run = format!("202611{:02}T063000Z-0000", day + 1);
        let t = Instant::now();
        set.flush(st, &run).expect("flush");
        daily.push(t.elapsed().as_secs_f64());
    }
    println!(
        "flush: 5,000 new URLs (a day's segment, fsync), mean {:>7.3} s wall",
        daily.iter().sum::<f64>() / daily.len() as f64
    );
    let set = timed("load: compacted file + 30 daily segments", || {
        SeenSet::load(st)
    })
    .expect("load");
    report_set(&set);

    // 3. Lookups (half hits, half misses) and records.
    let keys: Vec<u64> = set
        .iter()
        .step_by(7)
        .map(|(h, _)| h)
        .take(1_000_000)
        .collect();
    let mut probe = SplitMix(7);
    let found = timed("get: 2,000,000 lookups (half present)", || {
        let mut found = 0usize;
        for k in &keys {
            found += usize::from(set.get(*k).is_some());
            found += usize::from(set.get(probe.next()).is_some());
        }
        found
    });
    assert!(found >= keys.len());
    let mut set = set;
    timed("record: 100,000 new URLs in memory", || {
        for _ in 0..100_000 {
            set.record(probe.next(), Seen::new(20_500, flag::MISS));
        }
    });
    let written = timed("flush: those 100,000 (one append + fsync)", || {
        set.flush(st, "20261201T063000Z-0000")
    })
    .expect("flush");
    assert_eq!(written, 100_000);
    report_set(&set);
    drop(set);

    // 4. Compacting the whole history again.
    timed("compact: compacted file + 31 segments", || {
        seen::compact(st, "20261202T063000Z-0000")
    })
    .expect("compact");
    let set = timed("load: one compacted file", || SeenSet::load(st)).expect("load");
    report_set(&set);
}
