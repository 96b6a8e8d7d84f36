//! Integration tests: store (run lock across processes, seen-set segments and
//! compaction, state files).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use scraper::frontier::{Entry, Kind, Origin};
use scraper::store::seen::{self, Seen, SeenSet, flag};
use scraper::store::state;
use scraper::store::{DataDir, StoreError};

const CHILD_ENV: &str = "SCRAPER_TEST_LOCK_CHILD";

/// Not a test on its own: the child process of `lock_is_held_across_processes_and_freed_by_sigkill`.
#[test]
#[ignore = "run as a child process by another test"]
fn lock_holder_child() {
    let Some(root) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let root = Path::new(&root);
    let _dir = DataDir::open(root).unwrap();
    std::fs::write(root.join("child-ready"), b"").unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "child never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn lock_is_held_across_processes_and_freed_by_sigkill() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("data");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            // This module's path without the crate's: the name the harness filters on.
            &format!(
                "{}::lock_holder_child",
                module_path!().split_once("::").unwrap().1
            ),
            "--exact",
            "--ignored",
            "--quiet",
        ])
        .env(CHILD_ENV, &root)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&root.join("child-ready"));
    let err = DataDir::open(&root).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains(".lock"), "{err}");
    child.kill().unwrap(); // SIGKILL on Unix: no chance to clean up.
    child.wait().unwrap();
    let dir = DataDir::open(&root).unwrap();
    assert!(dir.is_locked());
}

fn hashes(set: &SeenSet) -> BTreeMap<u64, Seen> {
    set.iter().collect()
}

#[test]
fn seen_segments_merge_and_hit_is_sticky() {
    let tmp = tempfile::tempdir().unwrap();
    let st = tmp.path();
    let mut one = SeenSet::load(st).unwrap();
    one.record(1, Seen::new(100, flag::HIT));
    one.record(2, Seen::new(100, flag::MISS));
    one.record(3, Seen::new(100, flag::LISTED));
    assert_eq!(one.flush(st, "run-1").unwrap(), 3);
    assert_eq!(one.flush(st, "run-1").unwrap(), 0, "nothing new");
    one.record(3, Seen::new(100, flag::MISS));
    assert_eq!(one.flush(st, "run-1").unwrap(), 1);
    let seg = seen::segment_path(st, "run-1").unwrap();
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), 16 + 4 * 16);

    let mut two = SeenSet::load(st).unwrap();
    assert_eq!(two.len(), 3);
    assert_eq!(two.get(3), Some(Seen::new(100, flag::LISTED | flag::MISS)));
    two.record(1, Seen::new(101, flag::MISS)); // HIT survives a later miss
    two.record(2, Seen::new(107, flag::MISS)); // later day wins
    two.record(4, Seen::new(107, flag::ALIAS));
    two.record(1, Seen::new(50, flag::HIT)); // changes nothing: not written
    assert_eq!(two.flush(st, "run-2").unwrap(), 3);

    let three = SeenSet::load(st).unwrap();
    assert_eq!(three.load_stats().files, 2);
    assert_eq!(three.len(), 4);
    assert_eq!(three.get(1), Some(Seen::new(101, flag::MISS | flag::HIT)));
    assert!(!three.get(1).unwrap().due(1000, 7));
    assert_eq!(three.get(2), Some(Seen::new(107, flag::MISS)));
    assert!(three.get(4).unwrap().is_stored());
    assert_eq!(three.get(5), None);
}

#[test]
fn torn_records_are_ignored_and_cut_before_the_next_append() {
    let tmp = tempfile::tempdir().unwrap();
    let st = tmp.path();
    let mut set = SeenSet::default();
    set.record(10, Seen::new(5, flag::HIT));
    set.record(11, Seen::new(5, flag::MISS));
    set.flush(st, "r").unwrap();
    let seg = seen::segment_path(st, "r").unwrap();
    // A crash half-way through a record.
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes.extend_from_slice(&12u64.to_le_bytes()[..7]);
    std::fs::write(&seg, &bytes).unwrap();

    let loaded = SeenSet::load(st).unwrap();
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded.load_stats().torn_bytes, 7);

    set.record(13, Seen::new(6, flag::MISS));
    set.flush(st, "r").unwrap();
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), 16 + 3 * 16);
    let loaded = SeenSet::load(st).unwrap();
    assert_eq!(loaded.load_stats().torn_bytes, 0);
    assert_eq!(loaded.get(13), Some(Seen::new(6, flag::MISS)));

    // A segment whose header was torn right after creation holds nothing.
    std::fs::write(seen::segment_path(st, "t").unwrap(), b"SCRS").unwrap();
    assert_eq!(SeenSet::load(st).unwrap().len(), 3);
}

#[test]
fn compaction_is_equivalent_and_removes_merged_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let st = tmp.path();
    // Legacy headerless seen.bin.
    let mut legacy = Vec::new();
    for (h, day, flags) in [(1_000_000u64, 10u32, flag::HIT), (2, 10, flag::MISS)] {
        legacy.extend_from_slice(&h.to_le_bytes());
        legacy.extend_from_slice(&day.to_le_bytes());
        legacy.extend_from_slice(&flags.to_le_bytes());
    }
    std::fs::write(st.join("seen.bin"), &legacy).unwrap();
    let mut x = 99u64;
    for run in 0..6u32 {
        let mut set = SeenSet::default();
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let flags = 1 << ((x >> 33) % 4);
            set.record((x >> 40) % 2000, Seen::new(20 + run, flags));
        }
        set.flush(st, &format!("run-{run}")).unwrap();
    }
    let before = SeenSet::load(st).unwrap();
    assert_eq!(before.load_stats().files, 7);
    assert_eq!(before.get(1_000_000), Some(Seen::new(10, flag::HIT)));

    let report = seen::compact(st, "20261129T200000Z-abcd").unwrap();
    assert_eq!(report.files, 7);
    assert_eq!(report.records_out, before.len());
    let files = seen::segment_files(st).unwrap();
    assert_eq!(files, report.paths);
    assert_eq!(report.paths.len(), 1);
    assert!(!st.join("seen.bin").exists());
    let after = SeenSet::load(st).unwrap();
    assert_eq!(hashes(&after), hashes(&before));

    // A new run after compaction, then compacting again, still agrees.
    let mut set = SeenSet::load(st).unwrap();
    set.record(1_000_000, Seen::new(40, flag::MISS));
    set.record(5000, Seen::new(40, flag::LISTED));
    set.flush(st, "run-9").unwrap();
    let before = SeenSet::load(st).unwrap();
    seen::compact(st, "20261130T200000Z-abcd").unwrap();
    let after = SeenSet::load(st).unwrap();
    assert_eq!(hashes(&after), hashes(&before));
    assert_eq!(
        after.get(1_000_000),
        Some(Seen::new(40, flag::MISS | flag::HIT))
    );
    assert_eq!(seen::segment_files(st).unwrap().len(), 1);
}

fn entry(url: &str) -> Entry {
    Entry {
        url: url.into(),
        kind: Kind::Feed,
        origin: Origin::Relevant,
        depth: 2,
        lastmod: Some("2026-11-28T10:00:00Z".into()),
        value: scraper::frontier::NEUTRAL as f32,
        backlog: false,
        update: false,
        explore: false,
    }
}

#[test]
fn frontier_round_trip_with_a_torn_line() {
    let tmp = tempfile::tempdir().unwrap();
    let st = tmp.path();
    assert!(
        state::load_frontier(st, Default::default())
            .unwrap()
            .entries
            .is_empty()
    );
    let queue: Vec<Entry> = (0..50)
        .map(|i| entry(&format!("https://ex.com/{i}")))
        .collect();
    state::save_frontier(st, Default::default(), &queue).unwrap();
    let back = state::load_frontier(st, Default::default()).unwrap();
    assert_eq!((back.entries.as_slice(), back.bad_lines), (&queue[..], 0));

    let path = st.join(state::FRONTIER_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"url":"https://ex.com/torn","ki"#);
    std::fs::write(&path, &bytes).unwrap();
    let back = state::load_frontier(st, Default::default()).unwrap();
    assert_eq!((back.entries.len(), back.bad_lines), (50, 1));
    // A minimal line (older writers, hand edits) takes the defaults.
    std::fs::write(&path, "{\"url\":\"https://a.com/\"}\n").unwrap();
    let back = state::load_frontier(st, Default::default()).unwrap();
    assert_eq!(back.entries[0].kind, Kind::Page);

    state::save_frontier(st, Default::default(), &[]).unwrap();
    assert!(!path.exists(), "an empty queue removes the file");
}

#[test]
fn atomic_writes_show_old_or_new_never_a_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    let old = vec![b'o'; 200_000];
    let new = vec![b'n'; 300_000];
    state::write_atomic(&path, &old).unwrap();
    let reader = {
        let (path, old, new) = (path.clone(), old.clone(), new.clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(300) {
                let got = std::fs::read(&path).unwrap();
                assert!(got == old || got == new, "torn read of {} bytes", got.len());
            }
        })
    };
    for i in 0..40 {
        state::write_atomic(&path, if i % 2 == 0 { &new } else { &old }).unwrap();
    }
    reader.join().unwrap();
    // A temporary file left by a crash before the rename changes nothing.
    std::fs::write(tmp.path().join(".f.tmp-1-1"), b"half").unwrap();
    let got = std::fs::read(&path).unwrap();
    assert!(got == old || got == new);
}

#[test]
fn compact_command_merges_segments_and_keeps_every_url() {
    use scraper::store::seen::{Seen, SeenSet, flag};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("data/state");
    std::fs::create_dir_all(&state).unwrap();
    for (run, base) in [
        ("20260101T000000Z-aaaa", 0u64),
        ("20260102T000000Z-bbbb", 500),
    ] {
        let mut s = SeenSet::load(&state).unwrap();
        for h in base..base + 1000 {
            s.record(
                h * 7919 + 1,
                Seen {
                    day: 20000,
                    flags: if h % 2 == 0 { flag::HIT } else { flag::MISS },
                },
            );
        }
        s.flush(&state, run).unwrap();
    }
    let before = SeenSet::load(&state).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scraper"))
        .args(["compact", "--data"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = SeenSet::load(&state).unwrap();
    assert_eq!(after.len(), 1500);
    for (h, seen) in before.iter() {
        assert_eq!(after.get(h), Some(seen));
    }
    let files: Vec<_> = std::fs::read_dir(state.join("seen")).unwrap().collect();
    assert_eq!(files.len(), 1, "segments were not merged");
}
