//! Table-style tests of the health rules on hand-made histories.

use super::*;
use crate::health::{RobotsSeen, SeedAnswer, SourceRun};

/// The answer written `name` in a health file.
fn answer(name: &str) -> Answer {
    Answer::from_name(name).unwrap_or_else(|| panic!("not an answer: {name}"))
}

fn run(answers: &[(&str, u64)]) -> SourceRun {
    let mut s = SourceRun::default();
    for (k, n) in answers {
        s.answers.insert(answer(k), *n);
    }
    s.robots = Some(RobotsSeen {
        outcome: RobotsAccess::Parsed,
        detail: "200".into(),
        hash: Some("aa".into()),
        allows_path: true,
    });
    s
}

fn with_seed(
    mut s: SourceRun,
    url: &str,
    kind: Kind,
    answer_name: &str,
    moved: Option<&str>,
) -> SourceRun {
    s.seeds.push(SeedAnswer {
        url: url.into(),
        kind,
        answer: answer(answer_name),
        entries: None,
        moved_to: moved.map(str::to_string),
    });
    s
}

fn with_pages(mut s: SourceRun, pages: u64, articles: u64, text: u64) -> SourceRun {
    s.pages = pages;
    s.articles = articles;
    s.text_median = Some(text);
    s
}

/// A healthy run: a feed answered, some new articles.
fn healthy() -> SourceRun {
    with_pages(
        with_seed(
            run(&[("2xx", 9)]),
            "http://s.test/feed",
            Kind::Feed,
            "2xx",
            None,
        ),
        8,
        8,
        4200,
    )
}

/// A quiet run: the feed answers 304, nothing new.
fn quiet() -> SourceRun {
    with_seed(
        run(&[("304", 1)]),
        "http://s.test/feed",
        Kind::Feed,
        "304",
        None,
    )
}

fn judge_all(history: &[SourceRun]) -> Verdict {
    let ids: Vec<String> = (1..=history.len()).map(|i| format!("r{i}")).collect();
    let runs: Vec<RunRef> = history
        .iter()
        .zip(&ids)
        .map(|(s, id)| RunRef {
            run_id: id,
            source: Some(s),
        })
        .collect();
    judge("s.test", "/", &runs, &Health::default())
}

#[test]
fn stable_and_quiet_sources_are_ok() {
    let mut h: Vec<SourceRun> = (0..10).map(|_| healthy()).collect();
    assert_eq!(judge_all(&h).status, Status::Ok, "{:?}", judge_all(&h));
    h.extend((0..5).map(|_| quiet()));
    let v = judge_all(&h);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert!(v.findings.is_empty());
    assert_eq!(v.trend.len(), 15);
    // Untouched runs are skipped, not counted as failures.
    let v = judge(
        "s.test",
        "/",
        &[RunRef {
            run_id: "r1",
            source: None,
        }],
        &Health::default(),
    );
    assert_eq!(v.status, Status::Ok);
    assert_eq!(v.notes.len(), 1);
}

#[test]
fn bot_wall_is_degraded_then_broken() {
    let wall = || {
        with_seed(
            run(&[("403", 1)]),
            "http://s.test/feed",
            Kind::Feed,
            "403",
            None,
        )
    };
    let v = judge_all(&[healthy(), healthy(), wall()]);
    assert_eq!(v.status, Status::Degraded, "{v:?}");
    assert_eq!(v.findings[0].problem, Problem::AllFailing);
    assert_eq!(v.findings[0].reason, "403 on every request since run r3");
    assert_eq!(v.findings.len(), 1, "the seed rule stays quiet: {v:?}");
    let v = judge_all(&[healthy(), wall(), wall(), wall()]);
    assert_eq!(v.status, Status::Broken);
    assert_eq!(
        v.findings[0].reason,
        "403 on every request for 3 runs (since run r2)"
    );
    // Mixed failures are listed.
    let v = judge_all(&[healthy(), run(&[("403", 2), ("timeout", 1)])]);
    assert_eq!(
        v.findings[0].reason,
        "every request failed (403: 2, timeout: 1) since run r2"
    );
}

#[test]
fn mostly_failing_is_degraded() {
    let v = judge_all(&[healthy(), run(&[("2xx", 2), ("503", 4)])]);
    assert_eq!(v.status, Status::Degraded);
    assert_eq!(v.findings[0].problem, Problem::MostlyFailing);
    assert!(
        v.findings[0]
            .reason
            .starts_with("67% of requests failed (503: 4)"),
        "{v:?}"
    );
    // Too few requests to judge a share.
    assert_eq!(
        judge_all(&[healthy(), run(&[("2xx", 1), ("503", 1)])]).status,
        Status::Ok
    );
}

#[test]
fn dead_and_moved_feeds() {
    let dead = with_seed(
        run(&[("404", 1)]),
        "http://s.test/feed",
        Kind::Feed,
        "404",
        None,
    );
    let v = judge_all(&[healthy(), healthy(), dead.clone()]);
    assert_eq!(v.status, Status::Broken, "{v:?}");
    assert_eq!(v.findings.len(), 1, "{v:?}");
    assert_eq!(v.findings[0].problem, Problem::SeedFailing);
    assert_eq!(
        v.findings[0].reason,
        "feed http://s.test/feed answers 404 since run r3"
    );
    // With another seed still working, the source is only degraded.
    let other = with_seed(
        dead,
        "http://s.test/sitemap.xml",
        Kind::Sitemap,
        "2xx",
        None,
    );
    assert_eq!(judge_all(&[healthy(), other]).status, Status::Degraded);
    // Moved off the source.
    let moved = with_seed(
        run(&[("out_of_scope", 1)]),
        "http://s.test/feed",
        Kind::Feed,
        "out_of_scope",
        Some("http://elsewhere.test/rss"),
    );
    let v = judge_all(&[healthy(), moved]);
    assert_eq!(v.status, Status::Broken);
    assert_eq!(
        v.findings[0].reason,
        "feed http://s.test/feed redirects to http://elsewhere.test/rss, outside the source, since run r2"
    );
    // Moved and working: a note, still ok.
    let redirected = with_seed(
        run(&[("2xx", 1)]),
        "http://s.test/feed",
        Kind::Feed,
        "2xx",
        Some("http://s.test/new-feed"),
    );
    let v = judge_all(&[healthy(), redirected]);
    assert_eq!(v.status, Status::Ok);
    assert!(
        v.notes[0].contains("now redirects to http://s.test/new-feed"),
        "{v:?}"
    );
}

#[test]
fn robots_closing_the_path_is_broken_at_once() {
    let mut closed = run(&[("robots", 3)]);
    closed.robots.as_mut().unwrap().allows_path = false;
    closed.robots.as_mut().unwrap().hash = Some("bb".into());
    let closed = with_seed(closed, "http://s.test/feed", Kind::Feed, "robots", None);
    let v = judge_all(&[healthy(), closed]);
    assert_eq!(v.status, Status::Broken);
    assert_eq!(v.findings.len(), 1, "{v:?}");
    assert_eq!(
        v.findings[0].reason,
        "robots.txt now disallows the source's path / (since run r2)"
    );
    assert!(
        v.notes.iter().any(|n| n.contains("robots.txt changed")),
        "{v:?}"
    );

    let mut down = run(&[]);
    down.robots = Some(RobotsSeen {
        outcome: RobotsAccess::Unreachable,
        detail: "503".into(),
        hash: None,
        allows_path: false,
    });
    let v = judge_all(&[healthy(), down.clone()]);
    assert_eq!(v.status, Status::Degraded);
    assert_eq!(v.findings[0].problem, Problem::RobotsUnreachable);
    assert_eq!(
        judge_all(&[healthy(), down.clone(), down]).status,
        Status::Broken
    );
}

#[test]
fn extraction_collapse_names_the_run_and_the_text_lengths() {
    let redesign = || with_pages(run(&[("2xx", 9)]), 8, 0, 300);
    let v = judge_all(&[healthy(), healthy(), healthy(), redesign()]);
    assert_eq!(v.status, Status::Broken, "{v:?}");
    assert_eq!(
        v.findings[0].reason,
        "pages no longer judged articles since run r4 (median text 4,200 -> 300 characters)"
    );
    let v = judge_all(&[healthy(), healthy(), redesign(), quiet(), redesign()]);
    assert_eq!(v.findings[0].since, "r3");
    assert_eq!(v.findings[0].runs, 2);
    // Fewer articles, not none: degraded.
    let v = judge_all(&[
        healthy(),
        healthy(),
        with_pages(run(&[("2xx", 9)]), 8, 2, 4000),
    ]);
    assert_eq!(v.status, Status::Degraded);
    assert!(
        v.findings[0]
            .reason
            .starts_with("fewer pages judged articles (100% -> 25%)"),
        "{v:?}"
    );
    // Shorter text alone.
    let v = judge_all(&[healthy(), with_pages(run(&[("2xx", 9)]), 8, 8, 500)]);
    assert_eq!(v.status, Status::Degraded);
    assert!(
        v.findings[0]
            .reason
            .starts_with("extracted text much shorter"),
        "{v:?}"
    );
    // Too few pages to judge.
    assert_eq!(
        judge_all(&[healthy(), with_pages(run(&[("2xx", 3)]), 2, 0, 100)]).status,
        Status::Ok
    );
    // A first run whose pages are never articles.
    let v = judge_all(&[redesign()]);
    assert_eq!(v.findings[0].problem, Problem::NoArticles);
    // Ordinary variation is no alarm.
    let v = judge_all(&[
        healthy(),
        with_pages(run(&[("2xx", 9)]), 8, 6, 3000),
        with_pages(run(&[("2xx", 9)]), 6, 5, 5200),
    ]);
    assert_eq!(v.status, Status::Ok, "{v:?}");
}

#[test]
fn linked_pages_are_judged_only_for_sources_without_listed_ones() {
    let linked = |pages, articles, text| {
        let mut s = run(&[("2xx", 9)]);
        s.linked_pages = pages;
        s.linked_articles = articles;
        s.linked_text_median = Some(text);
        s
    };
    // A source seeded with its home page: links are all it has.
    let v = judge_all(&[linked(8, 7, 3000), linked(8, 6, 3100), linked(8, 0, 200)]);
    assert_eq!(v.status, Status::Broken, "{v:?}");
    assert_eq!(v.findings[0].problem, Problem::ExtractionCollapsed);
    // With feeds, linked pages (sections, tags) are not judged: no false alarm.
    let mut quiet_links = with_pages(run(&[("2xx", 9)]), 8, 8, 4200);
    quiet_links.linked_pages = 6;
    let mut section_day = with_pages(run(&[("2xx", 3)]), 0, 0, 0);
    section_day.text_median = None;
    section_day.linked_pages = 6;
    section_day.linked_text_median = Some(150);
    let v = judge_all(&[healthy(), quiet_links, section_day]);
    assert_eq!(v.status, Status::Ok, "{v:?}");
}

#[test]
fn thousands_separators() {
    for (n, s) in [
        (0, "0"),
        (300, "300"),
        (4200, "4,200"),
        (1234567, "1,234,567"),
    ] {
        assert_eq!(thousands(n), s);
    }
}

#[test]
fn bot_challenges_and_payment_are_named_for_what_they_are() {
    let h = Health::default();
    // Every request a challenge (a wall, or an interstitial on every page).
    let wall = run(&[("challenge", 4)]);
    let v = judge_all(&[healthy(), wall.clone()]);
    assert_eq!(v.status, Status::Degraded, "{v:?}");
    assert_eq!(v.findings[0].problem, Problem::BotChallenge);
    assert_eq!(
        v.reason(),
        Some("bot challenge on every request since run r2")
    );
    assert_eq!(
        v.findings.len(),
        1,
        "no second finding for the same answers: {v:?}"
    );
    let long: Vec<SourceRun> = (0..h.broken_after_runs).map(|_| wall.clone()).collect();
    assert_eq!(judge_all(&long).status, Status::Broken);
    // The feed answers, every article is challenged.
    let articles = with_seed(
        run(&[("2xx", 1), ("challenge", 6)]),
        "http://s.test/feed",
        Kind::Feed,
        "2xx",
        None,
    );
    let v = judge_all(&[healthy(), articles]);
    assert_eq!(
        v.reason(),
        Some("bot challenge on every article since run r2")
    );
    // A few challenges among good pages: a note.
    let few = with_pages(run(&[("2xx", 20), ("challenge", 1)]), 20, 20, 4200);
    let v = judge_all(&[healthy(), few]);
    assert_eq!(v.status, Status::Ok, "{v:?}");
    assert!(
        v.notes
            .iter()
            .any(|n| n.contains("bot challenge on 1 of 21")),
        "{v:?}"
    );
    // 402 with a price: broken at once, the price named.
    let mut pay = run(&[("payment_required", 3)]);
    pay.price = Some("USD 0.01".into());
    let v = judge_all(&[healthy(), pay]);
    assert_eq!(v.status, Status::Broken, "{v:?}");
    assert_eq!(v.findings[0].problem, Problem::PaymentRequired);
    assert_eq!(
        v.reason(),
        Some("payment required (402, price USD 0.01) on every request since run r2")
    );
    assert_eq!(v.findings.len(), 1, "{v:?}");
}
