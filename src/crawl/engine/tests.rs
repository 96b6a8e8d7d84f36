//! The loop's decisions on finished jobs, table-style, on a real [`Engine`]
//! over a temporary data folder and without a server: each case hands the
//! engine one job's result, as a worker would, and checks what it counted,
//! kept for the next run, requeued, remembered and blamed the host for.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{Engine, Start};
use crate::config::Config;
use crate::crawl::events::EventLog;
use crate::crawl::reach::Cutoff;
use crate::crawl::worker::{Body, Done, Job, Meta};
use crate::crawl::{Options, Progress, Totals, setup};
use crate::frontier::{Entry, Kind, Next, Origin};
use crate::net::FetchError;
use crate::net::turned::Turned;
use crate::record::StopReason;
use crate::store::DataDir;
use crate::store::seen::{Failure, flag};
use crate::store::state::RunHistory;
use crate::url;

struct Quiet;

/// What a worker brings back for a job.
type Answered = Result<(Meta, Body), FetchError>;

impl Progress for Quiet {
    fn update(&mut self, _: Totals) {}
    fn finish(&mut self, _: StopReason) {}
}

/// An engine of one run over `dir`, with the default config.
fn engine(dir: &std::path::Path) -> Engine {
    let config = Config::default();
    let data = DataDir::open(dir).unwrap();
    let started_at: DateTime<Utc> = "2026-12-01T06:00:00Z".parse().unwrap();
    let run_id = "20261201T060000Z-abcd";
    let history = RunHistory::load(&data.state).unwrap();
    let (sink, store) = setup::open_store(&data, &config, &history, run_id, started_at).unwrap();
    let opts = Options::default();
    let (ctx, seeds, answers) = setup::worker_context(&config, &opts, &data, started_at).unwrap();
    let start = Start {
        run_id: run_id.into(),
        started_at,
        cutoff: Cutoff::fixed(None),
        last: None,
        seeds,
        answers,
        progress: Box::new(Quiet),
    };
    Engine::new(config, ctx, sink, store, EventLog::none(), start)
}

/// Queue `entry` and take it back as the frontier hands it out: the job a worker gets.
fn job(e: &mut Engine, entry: Entry) -> Job {
    let u = url::parse(&entry.url).unwrap();
    assert!(e.enqueue(&u, entry));
    match e.work.next(e.now()) {
        Next::Ready { host, entry } => Job {
            host,
            url: u,
            entry,
            etag: None,
            last_modified: None,
            freed: false,
        },
        other => panic!("not handed out: {other:?}"),
    }
}

/// What one case expects after the engine handled the job.
struct Want {
    /// The host's `errors`, as written in `last_run.json`.
    errors: &'static str,
    /// Entries kept for the next run.
    kept: usize,
    /// Entries back in the queue (requeued or put back).
    queued: usize,
    /// The host's cause for not being read as a source today.
    troubled: Option<&'static str>,
    /// The request URL's seen-set flags (`None`: not remembered).
    seen: Option<u32>,
    /// Errors of the run (`progress` and `done` events).
    run_errors: u64,
}

#[test]
fn each_finished_job_is_counted_kept_and_blamed_as_before() {
    let page = |o| Entry::new("https://a.test/story", Kind::Page, o, 1);
    let feed = Entry::new("https://a.test/feed.xml", Kind::Feed, Origin::Seed, 0);
    let ok = |status, body| {
        Ok((
            Meta::answered(url::parse("https://a.test/x").unwrap(), status),
            body,
        ))
    };
    let soon = |status| {
        let mut m = Meta::answered(url::parse("https://a.test/story").unwrap(), status);
        m.retry_after = Some(Duration::from_secs(1));
        Ok((m, Body::Status(status)))
    };
    let challenge = Turned::Challenge {
        status: 403,
        marker: "cf-mitigated".into(),
    };
    let robots = FetchError::RobotsDisallowed(url::parse("https://a.test/story").unwrap());
    #[rustfmt::skip]
    let table: Vec<(&str, Entry, Answered, Want)> = vec![
        ("page timeout", page(Origin::Listed), Err(FetchError::Timeout),
            Want { errors: r#"{"timeout":1}"#, kept: 1, queued: 0, troubled: None, seen: None, run_errors: 1 }),
        ("seed feed timeout", feed.clone(), Err(FetchError::Timeout),
            Want { errors: r#"{"timeout":1}"#, kept: 0, queued: 0, troubled: Some("timeout on https://a.test/feed.xml"), seen: None, run_errors: 1 }),
        ("page 503", page(Origin::Listed), ok(503, Body::Status(503)),
            Want { errors: r#"{"5xx":1}"#, kept: 1, queued: 0, troubled: None, seen: None, run_errors: 0 }),
        ("seed feed 503", feed.clone(), ok(503, Body::Status(503)),
            Want { errors: r#"{"5xx":1}"#, kept: 0, queued: 0, troubled: Some("503 on https://a.test/feed.xml"), seen: None, run_errors: 0 }),
        ("page 404", page(Origin::Listed), ok(404, Body::Status(404)),
            Want { errors: r#"{"4xx":1}"#, kept: 0, queued: 0, troubled: None, seen: Some(Failure::Gone.flags()), run_errors: 0 }),
        ("page 403", page(Origin::Relevant), ok(403, Body::Status(403)),
            Want { errors: r#"{"4xx":1}"#, kept: 0, queued: 0, troubled: None, seen: Some(flag::MISS), run_errors: 0 }),
        ("page 429, back soon", page(Origin::Listed), soon(429),
            Want { errors: r#"{"429":1}"#, kept: 0, queued: 1, troubled: None, seen: None, run_errors: 0 }),
        ("page rested", page(Origin::Listed), Err(FetchError::Rested),
            Want { errors: r#"{"rested":1}"#, kept: 1, queued: 0, troubled: Some("rested"), seen: None, run_errors: 0 }),
        ("page disallowed", page(Origin::Listed), Err(robots),
            Want { errors: r#"{"robots":1}"#, kept: 0, queued: 0, troubled: None, seen: None, run_errors: 0 }),
        ("page, budget spent", page(Origin::Listed), Err(FetchError::Budget),
            Want { errors: r#"{"budget":1}"#, kept: 0, queued: 1, troubled: None, seen: None, run_errors: 0 }),
        ("page too large", page(Origin::Listed), Err(FetchError::TooLarge),
            Want { errors: r#"{"too_large":1}"#, kept: 0, queued: 0, troubled: None, seen: Some(Failure::TooLarge.flags()), run_errors: 1 }),
        ("page challenged", page(Origin::Listed), ok(403, Body::Turned(challenge.clone())),
            Want { errors: r#"{"challenge":1}"#, kept: 1, queued: 0, troubled: None, seen: None, run_errors: 1 }),
        ("seed feed challenged", feed.clone(), ok(403, Body::Turned(challenge)),
            Want { errors: r#"{"challenge":1}"#, kept: 0, queued: 0, troubled: Some("challenge on https://a.test/feed.xml"), seen: None, run_errors: 1 }),
        ("page 402", page(Origin::Listed), ok(402, Body::Turned(Turned::Payment { price: None, error: None, terms: None })),
            Want { errors: r#"{"payment_required":1}"#, kept: 0, queued: 0, troubled: None, seen: Some(Failure::PaymentRequired.flags()), run_errors: 1 }),
        ("parser panicked", page(Origin::Listed), ok(200, Body::Panicked("boom".into())),
            Want { errors: r#"{"panic":1}"#, kept: 0, queued: 0, troubled: None, seen: None, run_errors: 1 }),
        ("page 304", page(Origin::Listed), ok(304, Body::NotModified),
            Want { errors: "{}", kept: 0, queued: 0, troubled: None, seen: Some(flag::MISS), run_errors: 0 }),
    ];
    for (name, entry, result, want) in table {
        check_finished(name, entry, result, want);
    }
}

/// Hand one finished job to a fresh engine and compare what it counted, kept and blamed.
fn check_finished(name: &str, entry: Entry, result: Answered, want: Want) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path());
    let j = job(&mut e, entry);
    let hash = url::seen_hash(&j.url);
    e.handle(Done {
        job: j,
        robots: None,
        result,
    });
    let host = &e.ledger.hosts()["a.test"];
    assert_eq!(
        serde_json::to_string(&host.errors).unwrap(),
        want.errors,
        "{name}"
    );
    assert_eq!(
        e.work.kept().len(),
        want.kept,
        "{name}: kept for the next run"
    );
    assert_eq!(e.work.len(), want.queued, "{name}: back in the queue");
    let troubled = e
        .ledger
        .reach()
        .troubled()
        .get("a.test")
        .map(|c| c.to_string());
    assert_eq!(troubled.as_deref(), want.troubled, "{name}: troubled");
    assert_eq!(
        e.sink.seen(hash).map(|s| s.flags),
        want.seen,
        "{name}: seen"
    );
    assert_eq!(
        e.ledger.counts().errors,
        want.run_errors,
        "{name}: run errors"
    );
    // A robots.txt refusal is counted as such, and a 304 as one.
    assert_eq!(
        host.disallowed,
        u64::from(name == "page disallowed"),
        "{name}"
    );
    assert_eq!(host.not_modified, u64::from(name == "page 304"), "{name}");
}

/// Only a network failure with nothing reached makes the run an outage.
#[test]
fn an_outage_needs_a_network_failure_and_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path());
    let seed = Entry::new("https://a.test/", Kind::Page, Origin::Seed, 0);
    let j = job(&mut e, seed);
    e.handle(Done {
        job: j,
        robots: None,
        result: Err(FetchError::Dns("no such host".into())),
    });
    let why = e.ledger.reach().outage().expect("an outage");
    assert!(why.contains("dns 1"), "{why}");
    let j = job(
        &mut e,
        Entry::new("https://b.test/", Kind::Page, Origin::Seed, 0),
    );
    let meta = Meta::answered(j.url.clone(), 404);
    e.handle(Done {
        job: j,
        robots: None,
        result: Ok((meta, Body::Status(404))),
    });
    assert_eq!(e.ledger.reach().outage(), None, "a 404 is an answer");
}
