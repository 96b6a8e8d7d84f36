//! Four clones of one repository run `scripts/daily.sh --partition i/4` at
//! the same time against the local multi-host web and push to one bare
//! remote: all land without a conflict or a manual step, with no id or URL
//! twice, every host fetched by its one owner, and `scraper build` keeps
//! every article. Then a laptop run and an Action run of one partition from
//! the same state on the same day both land with distinct ids.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use scraper::partition::Partition;

use crate::support::fixture::stderr;
use crate::support::git::{bare_remote, clone_into, git};
use crate::support::many_hosts::{STORIES, many_hosts_web, sources};

fn owner(host: &str, n: u32) -> u32 {
    let u = scraper::url::parse(&format!("http://{host}/")).unwrap();
    Partition::new(0, n).unwrap().owner_of(&u).index()
}

/// `per` hosts for each of `n` partitions (by hash, so every runner has work).
fn balanced_hosts(n: u32, per: usize) -> Vec<String> {
    let mut taken = vec![0; n as usize];
    let mut out = Vec::new();
    for i in 0.. {
        let h = format!("pub{i}.test");
        let o = owner(&h, n) as usize;
        if taken[o] < per {
            taken[o] += 1;
            out.push(h);
        }
        if taken.iter().all(|&t| t == per) {
            return out;
        }
    }
    unreachable!()
}

struct World {
    tmp: tempfile::TempDir,
    remote: PathBuf,
    proxy: String,
}

impl World {
    fn new(proxy: String, hosts: &[String]) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let remote = bare_remote(tmp.path());
        let seed = tmp.path().join("seed");
        clone_into(&remote, &seed);
        std::fs::create_dir_all(seed.join("scripts")).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(root.join("scripts/daily.sh"), seed.join("scripts/daily.sh")).unwrap();
        std::fs::write(
            seed.join("config.yml"),
            config(&sources(hosts), "scraper-test"),
        )
        .unwrap();
        std::fs::write(
            seed.join(".gitignore"),
            "/data/state/frontier*.jsonl\n/data/state/.lock\n/data/state/crawl.log\n/data/state/last_run.json\n/agent.yml\n",
        )
        .unwrap();
        git(&seed, &["add", "-A"]);
        git(
            &seed,
            &[
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@example.invalid",
                "commit",
                "-q",
                "-m",
                "init",
            ],
        );
        git(&seed, &["push", "-q", "origin", "HEAD:main"]);
        World { tmp, remote, proxy }
    }

    /// A new clone named `name` with its own (uncommitted) config whose
    /// User-Agent names it, so the server's log says who fetched what.
    fn clone(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        clone_into(&self.remote, &dir);
        for (k, v) in [("user.name", name), ("user.email", "bot@example.invalid")] {
            git(&dir, &["config", k, v]);
        }
        let shared = std::fs::read_to_string(dir.join("config.yml")).unwrap();
        std::fs::write(dir.join("agent.yml"), shared.replace("scraper-test", name)).unwrap();
        dir
    }

    fn daily(&self, dir: &Path, partition: &str) -> std::process::Child {
        Command::new("bash")
            .arg(dir.join("scripts/daily.sh"))
            .current_dir(dir)
            .env("SCRAPER_BIN", env!("CARGO_BIN_EXE_scraper"))
            .env("CONFIG", "agent.yml")
            .env("COMMIT", "1")
            .env("PARTITION", partition)
            .env("MAX_DURATION", "20s")
            .env("PUSH_BACKOFF", "0")
            .env("PUSH_RETRIES", "12")
            .env("http_proxy", &self.proxy)
            .env_remove("GITHUB_OUTPUT")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_ACTIONS")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run daily.sh")
    }

    /// A fresh clone of the remote: what everyone sees after the pushes.
    fn checkout(&self, name: &str) -> PathBuf {
        let dir = self.tmp.path().join(name);
        clone_into(&self.remote, &dir);
        dir
    }
}

fn config(sources: &str, agent: &str) -> String {
    format!(
        "keywords:\n  targets: [ai, model, language model, training, research]\n  strong_targets: [AI, artificial intelligence, large language model, machine learning, OpenAI, DeepMind]\n\
         sources:\n{sources}\n\
         crawl:\n  min_host_gap: 30ms\n  request_timeout: 5s\n  flush_every: 200ms\n  user_agent: \"{agent} (+http://example.invalid)\"\n"
    )
}

fn wait(child: std::process::Child) -> Output {
    child.wait_with_output().expect("daily.sh")
}

/// `(url, id)` of every record in every shard under `data/articles`.
fn records(data: &Path) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for shard in scraper::store::shard::list(&data.join("articles")).unwrap() {
        scraper::store::shard::read_lines(&shard, |l| {
            let v: serde_json::Value = serde_json::from_slice(l).unwrap();
            out.push((
                v["url"].as_str().unwrap().to_string(),
                v["id"].as_i64().unwrap(),
            ));
        })
        .unwrap();
    }
    out
}

#[test]
fn four_partitions_push_at_once_and_all_land() {
    let hosts = balanced_hosts(4, 2);
    let web = many_hosts_web(hosts.clone());
    let world = World::new(web.proxy_url(), &hosts);
    let clones: Vec<PathBuf> = (0..4).map(|i| world.clone(&format!("runner{i}"))).collect();
    let started = std::time::Instant::now();
    let children: Vec<_> = clones
        .iter()
        .enumerate()
        .map(|(i, dir)| world.daily(dir, &format!("{i}/4")))
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let out = wait(c);
        let log = stderr(&out);
        assert!(out.status.success(), "runner{i}: {log}");
        assert!(
            !log.contains("keeping the later run"),
            "runner{i} met a conflict: {log}"
        );
    }
    eprintln!("four daily.sh runs in {:.1?}", started.elapsed());

    // The union, as a fresh clone sees it.
    let all = world.checkout("union");
    let data = all.join("data");
    let recs = records(&data);
    let urls: HashSet<&str> = recs.iter().map(|(u, _)| u.as_str()).collect();
    let ids: HashSet<i64> = recs.iter().map(|(_, id)| *id).collect();
    assert_eq!(urls.len(), recs.len(), "a URL stored twice");
    assert_eq!(ids.len(), recs.len(), "an id handed out twice");
    assert_eq!(recs.len(), hosts.len() * STORIES, "{urls:?}");
    assert!(
        ids.iter()
            .all(|&id| id >= scraper::store::ids::LEGACY_LIMIT)
    );
    let runs = std::fs::read_dir(data.join("state/runs")).unwrap().count();
    assert_eq!(runs, 4, "one run summary per partition");
    assert!(!data.join("state/next_id").exists());

    // Every host fetched by exactly its owner, and never faster than the gap.
    let mut by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in web.log() {
        let agent = r.header("user-agent").unwrap_or_default();
        by.entry(r.host.clone())
            .or_default()
            .insert(agent.split(' ').next().unwrap_or_default().to_string());
    }
    for h in &hosts {
        let who: Vec<_> = by[h].iter().collect();
        assert_eq!(who, [&format!("runner{}", owner(h, 4))], "{h}");
        assert_eq!(web.gap_violations(h, Duration::from_millis(25)), 0, "{h}");
    }

    // The dataset build keeps every article.
    let dist = all.join("dist");
    let out = Command::new(env!("CARGO_BIN_EXE_scraper"))
        .arg("--config")
        .arg(all.join("config.yml"))
        .args(["build", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&dist)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dist.join("build.json")).unwrap()).unwrap();
    assert_eq!(build["rows"].as_u64(), Some(recs.len() as u64), "{build}");

    // A laptop and an Action run of partition 1/4 from the same state on the
    // same day: both land, with distinct ids and no renumbering.
    let laptop = world.clone("laptop");
    let action = world.clone("action");
    // Both find a new source of partition 1 (added to their local config).
    let p1: Vec<String> = (0..)
        .map(|i| format!("late{i}.test"))
        .filter(|h| owner(h, 4) == 1)
        .take(1)
        .collect();
    for dir in [&laptop, &action] {
        let cfg = std::fs::read_to_string(dir.join("agent.yml")).unwrap();
        let extra = format!("  - {{host: {0}, seeds: [http://{0}/]}}\n", p1[0]);
        std::fs::write(
            dir.join("agent.yml"),
            cfg.replacen("crawl:\n", &format!("{extra}crawl:\n"), 1),
        )
        .unwrap();
    }
    web.clear_log();
    let a = world.daily(&laptop, "1/4");
    let b = world.daily(&action, "1/4");
    for (name, c) in [("laptop", a), ("action", b)] {
        let out = wait(c);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
    let after = world.checkout("after");
    let recs = records(&after.join("data"));
    let ids: HashSet<i64> = recs.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids.len(), recs.len(), "an id handed out twice");
    let late: Vec<_> = recs.iter().filter(|(u, _)| u.contains(&p1[0])).collect();
    // Both runs found the new host's stories: the same URLs under two ids,
    // which the dataset build removes as duplicates; no id is shared.
    assert_eq!(late.len(), 2 * STORIES, "{late:?}");
    assert_eq!(
        std::fs::read_dir(after.join("data/state/runs"))
            .unwrap()
            .count(),
        6
    );
    let log = git(&after, &["log", "--format=%s"]);
    assert!(!log.contains("renumber"), "{log}");
}
