//! What a chunk-deduplicating store would take for a new build: every file of
//! the new build is cut into content-defined chunks (a gear rolling hash, as
//! the Hub's Xet store does: 64 KiB on average, 8 KiB to 128 KiB), and the
//! bytes of the chunks found in no file of the old build (nor earlier in the
//! new one) are what an upload would send.
//!
//! ```text
//! chunk_diff OLD_DIR NEW_DIR      (every regular file under each, recursively)
//! ```
//!
//! Prints `new_bytes total_bytes new_chunks chunks` for the new build.
//! Built by `benches/cdc_delta.sh`; without arguments it prints this usage
//! and exits (so a plain `cargo bench` is cheap).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

const MIN: usize = 8 << 10;
const MAX: usize = 128 << 10;
/// 16 bits set: a boundary every 64 KiB on average past the minimum.
const MASK: u64 = 0xFFFF_0000_0000_0000;

fn gear() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut s: u64 = 0x6765_6172;
    for v in &mut t {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        *v = z ^ (z >> 31);
    }
    t
}

/// The chunks of `data`, as (hash, length).
fn chunks(data: &[u8], gear: &[u64; 256], out: &mut Vec<(u128, usize)>) {
    chunks_at(data, gear, &mut |h, _, len| out.push((h, len)));
}

/// The chunks of `data`: `f(hash, offset, length)` for each.
fn chunks_at(data: &[u8], gear: &[u64; 256], f: &mut dyn FnMut(u128, usize, usize)) {
    let mut start = 0;
    while start < data.len() {
        let end = (start + MAX).min(data.len());
        let mut cut = end;
        let mut h: u64 = 0;
        let mut i = start + MIN.min(end - start);
        while i < end {
            h = (h << 1).wrapping_add(gear[data[i] as usize]);
            if h & MASK == 0 {
                cut = i + 1;
                break;
            }
            i += 1;
        }
        f(xxh3_128(&data[start..cut]), start, cut - start);
        start = cut;
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}

fn all_chunks(dir: &Path, gear: &[u64; 256]) -> Vec<(u128, usize)> {
    let mut list = Vec::new();
    files(dir, &mut list);
    let mut out = Vec::new();
    for f in list {
        let data = std::fs::read(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        chunks(&data, gear, &mut out);
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [old, new] = args.as_slice() else {
        eprintln!("usage: chunk_diff OLD_DIR NEW_DIR");
        return;
    };
    let gear = gear();
    let mut seen: HashSet<u128> = all_chunks(Path::new(old), &gear)
        .into_iter()
        .map(|(h, _)| h)
        .collect();
    let (mut new_bytes, mut total, mut new_chunks, mut n) = (0usize, 0usize, 0usize, 0usize);
    // CHUNK_LOG=FILE lists each new chunk as "path offset length", to see where they fall.
    let mut log =
        std::env::var_os("CHUNK_LOG").map(|p| std::fs::File::create(p).expect("CHUNK_LOG"));
    let mut list = Vec::new();
    files(Path::new(new), &mut list);
    for f in list {
        let data = std::fs::read(&f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
        chunks_at(&data, &gear, &mut |h, at, len| {
            total += len;
            n += 1;
            if seen.insert(h) {
                new_bytes += len;
                new_chunks += 1;
                if let Some(l) = log.as_mut() {
                    use std::io::Write;
                    let _ = writeln!(l, "{} {at} {len}", f.display());
                }
            }
        });
    }
    println!("{new_bytes} {total} {new_chunks} {n}");
}
