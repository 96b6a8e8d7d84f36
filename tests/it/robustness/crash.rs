//! Crash safety: SIGKILL the real crawler at random moments (fixed seed) and
//! check what it leaves; and a disk that fills up mid-run (a tmpfs mounted as
//! root or through `sudo -n`: fails where neither can, unless SCRAPER_SKIP_MOUNT=1).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use scraper::store::seen::{SeenSet, flag};
use scraper::store::shard;
use scraper::store::state::{RunSummary, load_frontier};

use crate::support::fixture::{Workspace, article_path, listing_html, news_web_with};
use crate::support::tool::{Tool, python_imports, runs};
use crate::support::web::{Reply, Req, Web};

/// Articles on `many.test`, on top of the standard web's two sources.
const MANY: usize = 60;

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}\n  - {host: lab.test, path: /blog, seeds: [http://lab.test/blog/]}\n  - {host: many.test, seeds: [http://many.test/]}";

/// The standard web plus `many.test`, a host with many articles.
fn crash_web(delay: Duration) -> Web {
    news_web_with(move |r: &Req| {
        if r.host != "many.test" || r.path == "/robots.txt" {
            return None;
        }
        if r.path == "/" {
            let links: Vec<String> = (0..MANY).map(article_path).collect();
            return Some(Reply::html(listing_html("Many", &links)));
        }
        let n: usize = r.path.rsplit("story-").next()?.parse().ok()?;
        Some(
            Reply::html(crate::support::fixture::article_html(
                "many.test",
                n,
                "2024-05-03",
            ))
            .delay(delay),
        )
    })
}

/// Every article URL the fixture web can serve through these sources.
fn all_articles() -> Vec<String> {
    let mut v = Vec::new();
    for n in 0..crate::support::fixture::ARTICLES {
        v.push(format!("http://news.test{}", article_path(n)));
        v.push(format!("http://lab.test/blog{}", article_path(n)));
    }
    v.push(format!("http://news.test{}", article_path(100)));
    for n in 0..MANY {
        v.push(format!("http://many.test{}", article_path(n)));
    }
    v
}

/// A fixed-seed generator (xorshift64*), so every run kills at the same moments.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// What the data folder holds, checked for the crash invariants.
struct Check {
    urls: HashSet<String>,
    records: usize,
    truncated: u64,
    /// WARC files with a torn tail, and whole records per file.
    torn_warcs: usize,
    warc_records: HashMap<String, u64>,
    /// Records that name their WARC record.
    warc_refs: usize,
}

/// Every WARC file reads up to its last whole record, and every record a
/// shard refers to is there: its `warc_offset` is a response for its URL.
fn check_warcs(data: &Path, refs: &[(String, String, u64)]) -> (usize, HashMap<String, u64>) {
    let dir = data.join("warc");
    let mut torn = 0;
    let mut counts = HashMap::new();
    for path in scraper::store::warc::list(&dir).expect("list WARC files") {
        let scan = scraper::store::warc::read_records(&path, |_| {}).expect("readable WARC");
        assert!(scan.records >= 4, "{}: a group at least", path.display());
        torn += usize::from(scan.truncated_bytes > 0);
        counts.insert(path.to_string_lossy().into_owned(), scan.records);
    }
    for (url, file, offset) in refs {
        let rec = scraper::store::warc::read_at(&dir.join(file), *offset)
            .expect("readable WARC")
            .unwrap_or_else(|| panic!("{url}: no WARC record at {file}:{offset}"));
        assert_eq!(rec.header("WARC-Type"), Some("response"), "{url}");
        assert_eq!(rec.header("WARC-Target-URI"), Some(url.as_str()));
    }
    (torn, counts)
}

/// Shards decode up to their last complete frame (no bad frame), every line
/// is JSON, no URL or id is stored twice, the state files load, and no URL is a stored hit without its record.
fn check(data: &Path) -> Check {
    let mut urls = HashSet::new();
    let mut ids = HashSet::new();
    let mut records = 0;
    let mut truncated = 0;
    let mut refs = Vec::new();
    for path in shard::list(&data.join("articles")).expect("list shards") {
        let scan = shard::read_lines(&path, |line| {
            let v: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
            let url = v["url"].as_str().expect("url").to_string();
            let id = v["id"].as_i64().expect("id");
            assert!(urls.insert(url.clone()), "{url} stored twice");
            assert!(ids.insert(id), "id {id} handed out twice");
            if let (Some(f), Some(o)) = (v["warc_file"].as_str(), v["warc_offset"].as_u64()) {
                refs.push((url.clone(), f.to_string(), o));
            }
            records += 1;
        })
        .expect("readable shard");
        assert_eq!(scan.bad_frames, 0, "{}: a corrupt frame", path.display());
        truncated += scan.truncated_bytes;
    }
    let state = data.join("state");
    if state.exists() {
        RunSummary::load(&state).expect("last_run.json loads");
        load_frontier(&state, Default::default()).expect("frontier.jsonl loads");
        let seen = SeenSet::load(&state).expect("the seen-set loads");
        for u in all_articles() {
            let parsed = scraper::url::parse(&u).expect("fixture URL");
            if let Some(s) = seen.get(scraper::url::seen_hash(&parsed))
                && s.flags & flag::HIT != 0
            {
                assert!(urls.contains(&u), "{u} is a stored hit without a record");
            }
        }
    }
    let (torn_warcs, warc_records) = check_warcs(data, &refs);
    Check {
        warc_refs: refs.len(),
        urls,
        records,
        truncated,
        torn_warcs,
        warc_records,
    }
}

/// Python `warcio` reads each WARC file up to the record our reader stops
/// at (a torn tail may end its iteration with an error, after the whole
/// records). `false` when SCRAPER_SKIP_PY=1.
fn warcio_agrees(counts: &HashMap<String, u64>) -> bool {
    let what = "the warcio read of the torn archives";
    if !Tool::Python.need(
        what,
        || python_imports("warcio"),
        "pip install warcio, as .ci/run does",
    ) {
        return false;
    }
    let code = r#"
import sys
from warcio.archiveiterator import ArchiveIterator
for p in sys.argv[1:]:
    n = 0
    try:
        with open(p, "rb") as f:
            for r in ArchiveIterator(f):
                r.content_stream().read()
                n += 1
    except Exception:
        pass
    print(p, n)
"#;
    let files: Vec<&String> = counts.keys().collect();
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(&files)
        .output()
        .expect("python3 with warcio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (path, n) = line.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        // warcio may yield a torn last member's head before failing on its body.
        let ours = counts[path];
        assert!(
            n == ours || n == ours + 1,
            "{path}: warcio read {n}, we read {ours}"
        );
    }
    true
}

/// A 30-second crawl with its output thrown away, to be killed.
fn spawn_quiet(ws: &Workspace) -> std::process::Child {
    ws.command(&[
        "crawl",
        "--data",
        "data",
        "--proxy",
        &ws.proxy,
        "--max-duration",
        "30s",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn scraper")
}

/// A workspace on `web` that archives what it stores (small gaps, frequent flushes).
fn archiving(web: &Web) -> Workspace {
    Workspace::new(
        web,
        SOURCES,
        "min_host_gap: 50ms\nflush_every: 100ms\narchive: articles",
    )
}

#[cfg(unix)]
#[test]
fn sigkill_at_random_moments_loses_nothing() {
    let web = crash_web(Duration::from_millis(20));
    let ws = archiving(&web);
    let mut torn_warcs = 0;
    let mut rng = Rng(0x5eed_c0de_2026_1129);
    let mut before: HashSet<String> = HashSet::new();
    let mut torn = 0;
    let mut moments = Vec::new();
    for trial in 0..20 {
        let wait = Duration::from_millis(50 + rng.next() % 751);
        moments.push(wait.as_millis());
        let mut child = spawn_quiet(&ws);
        std::thread::sleep(wait);
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        let after = check(&ws.data());
        assert!(
            before.is_subset(&after.urls),
            "trial {trial}: a stored article was lost"
        );
        torn += usize::from(after.truncated > 0);
        torn_warcs = torn_warcs.max(after.torn_warcs);
        eprintln!(
            "trial {trial}: killed after {} ms, {} records",
            wait.as_millis(),
            after.records
        );
        before = after.urls;
    }
    // The next run takes over whatever state the kills left and finishes the job.
    let started = Instant::now();
    let out = ws.crawl(&["--max-duration", "40s"]);
    assert!(
        out.status.success(),
        "the run after the kills failed: {}",
        crate::support::fixture::stderr(&out)
    );
    let end = check(&ws.data());
    assert!(before.is_subset(&end.urls));
    let missing: Vec<String> = all_articles()
        .into_iter()
        .filter(|u| !end.urls.contains(u))
        .collect();
    assert!(missing.is_empty(), "never stored: {missing:?}");
    assert_eq!(end.records, all_articles().len());
    let warcio = warcio_agrees(&end.warc_records);
    eprintln!(
        "20 kills at {moments:?} ms; shards with a torn tail after a kill: {torn}; \
         WARC files with a torn tail: {torn_warcs} of {} (warcio agrees: {warcio}); final run {:?}",
        end.warc_records.len(),
        started.elapsed()
    );
}

/// SIGKILL while the crawl archives: each kill comes a random moment after
/// the run's WARC file appeared (so it lands among the writes), then the
/// checks above; a last run finishes the job. Every record names its WARC
/// record and finds it there.
#[cfg(unix)]
#[test]
fn sigkill_while_archiving_keeps_every_warc_readable() {
    let web = crash_web(Duration::from_millis(20));
    let ws = archiving(&web);
    let warcs = || scraper::store::warc::list(&ws.data().join("warc")).map_or(0, |v| v.len());
    let mut rng = Rng(0xa7c4_17e5_2026_1201);
    let mut before: HashSet<String> = HashSet::new();
    let mut torn = 0;
    for trial in 0..8 {
        let had = warcs();
        let mut child = spawn_quiet(&ws);
        let until = Instant::now() + Duration::from_secs(20);
        while warcs() == had && Instant::now() < until && child.try_wait().ok().flatten().is_none()
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(rng.next() % 400));
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        let after = check(&ws.data());
        assert!(
            before.is_subset(&after.urls),
            "trial {trial}: a stored article was lost"
        );
        assert_eq!(
            after.warc_refs, after.records,
            "every record names its WARC record"
        );
        torn = torn.max(after.torn_warcs);
        eprintln!(
            "trial {trial}: {} records, {} WARC files",
            after.records,
            after.warc_records.len()
        );
        before = after.urls;
    }
    let out = ws.crawl(&["--max-duration", "40s"]);
    assert!(
        out.status.success(),
        "{}",
        crate::support::fixture::stderr(&out)
    );
    let end = check(&ws.data());
    assert_eq!(end.records, all_articles().len());
    assert_eq!(end.warc_refs, end.records);
    // A tail torn by hand (a kill mid-write), read by both readers to its last whole record.
    let (path, _) = end.warc_records.iter().next().unwrap();
    let bytes = std::fs::read(path).unwrap();
    let cut = ws.dir.path().join("torn.warc.gz");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let scan = scraper::store::warc::read_records(&cut, |_| {}).unwrap();
    assert!(scan.truncated_bytes > 100 && scan.records + 1 == end.warc_records[path]);
    let mut counts = end.warc_records.clone();
    counts.insert(cut.to_string_lossy().into_owned(), scan.records);
    let warcio = warcio_agrees(&counts);
    eprintln!(
        "WARC files: {}, with a torn tail: {torn}; warcio agrees: {warcio}",
        end.warc_records.len()
    );
}

/// A small tmpfs that anyone may write to, unmounted on drop: mounted as
/// root, or through `sudo -n` (as on CI runners). `None` where neither may mount.
struct Tmpfs {
    dir: tempfile::TempDir,
    sudo: bool,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let opts = format!("size={size},mode=1777");
        let path = dir.path().to_str()?;
        let args = ["mount", "-t", "tmpfs", "-o", &opts, "tmpfs", path];
        if runs(args[0], &args[1..]) {
            return Some(Tmpfs { dir, sudo: false });
        }
        runs("sudo", &[&["-n"][..], &args].concat()).then_some(Tmpfs { dir, sudo: true })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let path = self.dir.path().to_string_lossy().into_owned();
        let (program, args) = if self.sudo {
            ("sudo", vec!["-n", "umount", &path])
        } else {
            ("umount", vec![&path[..]])
        };
        let _ = std::process::Command::new(program).args(args).status();
    }
}

/// Fill the file system holding `path` until a write fails.
fn fill(path: &Path) -> std::fs::File {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("filler");
    let block = vec![0xa5u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
    f
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_clear_error_and_corrupts_nothing() {
    let what = "the full-disk test";
    if Tool::Mount.skipped(what) {
        return;
    }
    let Some(fs) = Tmpfs::mount("4m") else {
        Tool::Mount.missing(what, "run as root, or where `sudo -n mount` works")
    };
    let web = crash_web(Duration::from_millis(60));
    let ws = Workspace::new(&web, SOURCES, "min_host_gap: 60ms\nflush_every: 100ms");
    let data = fs.dir.path().join("data");
    let data_arg = data.to_string_lossy().into_owned();
    let err_path = ws.dir.path().join("stderr.txt");
    let mut child = ws
        .command(&[
            "crawl",
            "--data",
            &data_arg,
            "--proxy",
            &ws.proxy,
            "--max-duration",
            "8s",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("spawn scraper");
    // Let it store a few articles, then take every free byte.
    let log = data.join("state/crawl.log");
    let start = Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|s| s.matches("\"stored\"").count() >= 3) {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nothing stored within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let filler_path = fs.dir.path().join("filler");
    let filler = fill(&filler_path);
    let status = child.wait().expect("wait");
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    // The run fails, saying which file and why.
    assert!(!status.success(), "a crawl on a full disk claimed success");
    assert!(
        stderr.contains("No space left on device"),
        "no ENOSPC in: {stderr}"
    );
    let shard_dir = data.join("articles");
    assert!(
        stderr.contains(&*shard_dir.to_string_lossy()) || stderr.contains(&*data_arg),
        "the error does not name the path: {stderr}"
    );
    // Free the space: nothing is corrupt, the next run carries on.
    drop(filler);
    std::fs::remove_file(&filler_path).expect("remove filler");
    let first = check(&data);
    let out = ws
        .command(&[
            "crawl",
            "--data",
            &data_arg,
            "--proxy",
            &ws.proxy,
            "--max-duration",
            "30s",
        ])
        .output()
        .expect("run scraper");
    assert!(
        out.status.success(),
        "the run after the disk filled failed: {}",
        crate::support::fixture::stderr(&out)
    );
    let end = check(&data);
    assert!(first.urls.is_subset(&end.urls));
    let stored: HashMap<&str, ()> = end.urls.iter().map(|u| (u.as_str(), ())).collect();
    for u in all_articles() {
        assert!(stored.contains_key(u.as_str()), "{u} never stored");
    }
    eprintln!(
        "disk full: {} records before, {} after the retry",
        first.records, end.records
    );
}
