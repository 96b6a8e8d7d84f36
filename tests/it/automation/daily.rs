//! `scripts/daily.sh` end to end with the real crawler against the local test
//! web, inside a temporary git repository that pushes to a local bare remote.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::fixture::{article_html, article_path, listing_html, stderr};
use crate::support::git::{bare_remote, clone_into, git};
use crate::support::web::{Reply, Req, Web};

/// A news site whose home page lists `published` articles.
fn site(published: Arc<AtomicUsize>, delay: std::time::Duration) -> Web {
    Web::start(move |r: &Req| {
        let reply = route(r, &published);
        if r.path == "/" {
            reply.delay(delay)
        } else {
            reply
        }
    })
}

fn route(r: &Req, published: &AtomicUsize) -> Reply {
    {
        let n = published.load(Ordering::SeqCst);
        match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => Reply::html(listing_html(
                "Home",
                &(0..n).map(article_path).collect::<Vec<_>>(),
            )),
            p if p.contains("/story-") => {
                let i: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                if i < n {
                    Reply::html(article_html(
                        "daily.test",
                        i,
                        &crate::support::fixture::day(i),
                    ))
                } else {
                    Reply::not_found()
                }
            }
            _ => Reply::not_found(),
        }
    }
}

struct Repo {
    _tmp: tempfile::TempDir,
    work: std::path::PathBuf,
    remote: std::path::PathBuf,
    proxy: String,
}

impl Repo {
    fn new(web: &Web) -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let remote = bare_remote(tmp.path());
        let work = tmp.path().join("work");
        clone_into(&remote, &work);
        for (k, v) in [
            ("user.name", "Test"),
            ("user.email", "test@example.invalid"),
        ] {
            git(&work, &["config", k, v]);
        }
        let scripts = work.join("scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(root.join("scripts/daily.sh"), scripts.join("daily.sh")).unwrap();
        let config = "keywords:\n  targets: [ai, model, language model, training, research]\n  strong_targets: [AI, artificial intelligence, large language model, machine learning, OpenAI, DeepMind]\n\
                      sources:\n  - {host: daily.test, seeds: [http://daily.test/]}\n\
                      crawl:\n  min_host_gap: 20ms\n  request_timeout: 5s\n  flush_every: 200ms\n  user_agent: \"scraper-test/0.1 (+http://example.invalid)\"\n";
        std::fs::write(work.join("config.yml"), config).unwrap();
        std::fs::write(
            work.join(".gitignore"),
            "/data/state/frontier.jsonl\n/data/state/.lock\n/data/state/crawl.log\n",
        )
        .unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "init"]);
        git(&work, &["push", "-q", "origin", "HEAD:main"]);
        Repo {
            _tmp: tmp,
            work,
            remote,
            proxy: web.proxy_url(),
        }
    }

    fn daily(&self) -> Output {
        Command::new("bash")
            .arg(self.work.join("scripts/daily.sh"))
            .current_dir(std::env::temp_dir())
            .env("SCRAPER_BIN", env!("CARGO_BIN_EXE_scraper"))
            .env("COMMIT", "1")
            .env("MAX_DURATION", "20s")
            .env("PUSH_BACKOFF", "0")
            .env("http_proxy", &self.proxy)
            .env_remove("GITHUB_OUTPUT")
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .expect("run daily.sh")
    }

    fn remote_files(&self) -> Vec<String> {
        let out = git(&self.remote, &["ls-tree", "-r", "--name-only", "main"]);
        out.lines().map(str::to_string).collect()
    }
}

#[test]
fn daily_script_crawls_commits_pushes_and_rebases() {
    let published = Arc::new(AtomicUsize::new(4));
    // The home page answers after a second, so run three is still crawling when
    // the other clone pushes (after run three's pull, before its push).
    let web = site(published.clone(), std::time::Duration::from_secs(1));
    let repo = Repo::new(&web);

    // Run one: a shard and the state are committed and pushed.
    let out = repo.daily();
    assert!(out.status.success(), "run one: {}", stderr(&out));
    let files = repo.remote_files();
    let shards: Vec<_> = files
        .iter()
        .filter(|f| f.starts_with("data/articles/"))
        .collect();
    assert_eq!(shards.len(), 1, "{files:?}");
    for dir in ["data/state/runs/", "data/state/seen/"] {
        assert!(
            files.iter().any(|x| x.starts_with(dir)),
            "nothing committed under {dir}: {files:?}"
        );
    }
    assert!(!files.iter().any(|f| f.ends_with("frontier.jsonl")
        || f.ends_with(".lock")
        || f.ends_with("crawl.log")
        || f.ends_with("last_run.json")
        || f.ends_with("next_id")));

    // The web publishes two more; run two is incremental and adds a second shard.
    published.store(6, Ordering::SeqCst);
    web.clear_log();
    let out = repo.daily();
    assert!(out.status.success(), "run two: {}", stderr(&out));
    let refetched = web
        .log()
        .iter()
        .filter(|r| r.path.contains("/story-"))
        .count();
    assert_eq!(
        refetched,
        2,
        "run two fetched {refetched} articles; only the 2 new ones were due: {:?} {}",
        web.log().iter().map(|r| r.target()).collect::<Vec<_>>(),
        stderr(&out)
    );
    let shards = repo
        .remote_files()
        .into_iter()
        .filter(|f| f.starts_with("data/articles/"))
        .count();
    assert_eq!(shards, 2);

    // Run three races another clone's push and still lands by rebasing.
    let other = repo.work.parent().unwrap().join("other");
    git(
        repo.work.parent().unwrap(),
        &[
            "clone",
            "-q",
            repo.remote.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    std::fs::write(other.join("NOTES.md"), "someone else's change\n").unwrap();
    git(&other, &["add", "NOTES.md"]);
    git(
        &other,
        &[
            "-c",
            "user.name=Other",
            "-c",
            "user.email=o@example.invalid",
            "commit",
            "-q",
            "-m",
            "other",
        ],
    );
    published.store(7, Ordering::SeqCst);
    // The other clone pushes while run three is crawling.
    let pusher = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        // Like a second machine: if our push loses a race anyway, pull and push again.
        for _ in 0..5 {
            let ok = Command::new("git")
                .current_dir(&other)
                .args(["push", "-q", "origin", "HEAD:main"])
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                break;
            }
            let _ = Command::new("git")
                .current_dir(&other)
                .args(["pull", "-q", "--rebase", "origin", "main"])
                .status();
        }
    });
    let out = repo.daily();
    pusher.join().unwrap();
    assert!(out.status.success(), "run three: {}", stderr(&out));
    let files = repo.remote_files();
    assert!(
        files.iter().any(|f| f == "NOTES.md"),
        "the other clone's commit was lost"
    );
    assert_eq!(
        files
            .iter()
            .filter(|f| f.starts_with("data/articles/"))
            .count(),
        3
    );
}

#[test]
fn a_second_daily_run_refuses_while_one_runs() {
    let published = Arc::new(AtomicUsize::new(3));
    let web = site(published, std::time::Duration::from_secs(2));
    let repo = Repo::new(&web);
    let mut first = Command::new("bash")
        .arg(repo.work.join("scripts/daily.sh"))
        .env("SCRAPER_BIN", env!("CARGO_BIN_EXE_scraper"))
        .env("MAX_DURATION", "3s")
        .env("MIN_LASTMOD", "")
        .env("http_proxy", &repo.proxy)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let second = repo.daily();
    let _ = first.wait();
    assert!(!second.status.success());
    let msg = stderr(&second);
    assert!(
        msg.to_lowercase().contains("already") || msg.contains("lock"),
        "{msg}"
    );
}

#[test]
fn an_outage_commits_nothing_and_fails_visibly() {
    let published = Arc::new(AtomicUsize::new(3));
    let web = site(published, std::time::Duration::ZERO);
    let mut repo = Repo::new(&web);
    let out = repo.daily();
    assert!(out.status.success(), "run one: {}", stderr(&out));
    let head = git(&repo.remote, &["rev-parse", "main"]);
    let last_run = std::fs::read(repo.work.join("data/state/last_run.json")).unwrap();
    // The network is gone: a proxy address nothing listens on.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    repo.proxy = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let out = repo.daily();
    let msg = stderr(&out);
    assert_eq!(out.status.code(), Some(69), "{msg}");
    assert!(msg.contains("outage"), "{msg}");
    assert!(msg.contains("nothing is committed"), "{msg}");
    assert_eq!(git(&repo.remote, &["rev-parse", "main"]), head, "pushed");
    assert_eq!(git(&repo.work, &["rev-parse", "HEAD"]), head, "committed");
    assert_eq!(
        std::fs::read(repo.work.join("data/state/last_run.json")).unwrap(),
        last_run
    );
    assert_eq!(
        git(&repo.work, &["status", "--porcelain"]),
        "",
        "a dirty tree"
    );
}
