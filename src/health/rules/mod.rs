//! The health rules: a source's last runs in, a status and its reasons out.
//! Pure: no I/O, no clock. Thresholds come from `config.yml`'s `health:`.
//!
//! Only runs that touched the source count (a run that never reached it says
//! nothing). Each rule names the run its condition started in: the first of
//! the unbroken series of latest runs in which it held.
//!
//! | rule | condition (latest run) | status |
//! |---|---|---|
//! | robots closed | robots.txt parsed and disallows the source's path | broken |
//! | robots unreachable | robots.txt answered 5xx or not at all (nothing may be fetched) | degraded; broken after `broken_after_runs` |
//! | bot challenge | answers were bot challenges (a CDN wall, a JavaScript interstitial): on every request, or on every page but the seeds and listings ("every article") | degraded; broken after `broken_after_runs`; on some requests only: degraded when at least `failing_share` of at least `min_requests`, else a note |
//! | payment required | answers were `402 Payment Required` (with the price asked, if any): on every request or every article | broken (the publisher's decision, like robots.txt); on some requests: degraded |
//! | all failing | every request failed, at least one for a host-wide reason (401/403/429/5xx/network) | degraded; broken after `broken_after_runs` |
//! | mostly failing | at least `failing_share` of at least `min_requests` requests failed | degraded |
//! | seed failing | a configured feed, sitemap or seed page fails (404, a redirect off the source, ...) | broken when no seed works and the failure is the URL's own (404, 410, moved off the source) or lasted `broken_after_runs`; else degraded |
//! | extraction collapsed | with at least `min_pages` pages parsed, the share judged articles fell below `article_share_drop` of the usual, or the median text below `text_drop` of the usual (pages feeds and sitemaps listed; for a source without them, pages reached through links) | broken when no page is an article any more; else degraded |
//! | no articles | no earlier run to compare with, and none of at least `min_pages` pages is an article | degraded |
//!
//! "The usual" is the median over the judged runs before the change. A quiet
//! source (everything 304, no new pages) breaks none of these rules. Notes
//! (status unchanged): a seed that works but now redirects (put the new URL in
//! the config), a changed robots.txt.

use serde::{Deserialize, Serialize};

use super::{Answer, SeedAnswer, SourceRun};
use crate::frontier::Kind;
use crate::record::{FailureClass, RobotsAccess};

/// Thresholds of the source-health rules (`scraper health`, see
/// `health::rules` for what each rule says).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Health {
    /// Runs of history read per source (runs that reached it).
    pub window: usize,
    /// A failure that lasts this many runs in a row turns `degraded` into `broken`.
    pub broken_after_runs: u32,
    /// Share of a source's requests that must fail for `degraded` when not all do.
    pub(crate) failing_share: f64,
    /// Fewest requests a run must make to a source before `failing_share` is judged.
    pub(crate) min_requests: u64,
    /// Fewest pages (reached from listings or links) a run must parse before extraction is judged.
    pub min_pages: u64,
    /// Extraction has collapsed when the share of pages judged articles falls below this fraction of the usual ...
    pub(crate) article_share_drop: f64,
    /// ... or the median text length below this fraction of the usual.
    pub(crate) text_drop: f64,
}

impl Health {
    /// The `health:` section's own checks (run when `config.yml` loads).
    pub(crate) fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("health.failing_share", self.failing_share),
            ("health.article_share_drop", self.article_share_drop),
            ("health.text_drop", self.text_drop),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name}: expected a number between 0 and 1, got {v}"
                ));
            }
        }
        if self.window < 2 {
            return Err(format!(
                "health.window: expected at least 2 runs (a trend needs two), got {}",
                self.window
            ));
        }
        if self.broken_after_runs == 0 {
            return Err("health.broken_after_runs: expected at least 1".into());
        }
        if self.min_pages == 0 {
            return Err("health.min_pages: expected at least 1".into());
        }
        Ok(())
    }
}

impl Default for Health {
    fn default() -> Self {
        Health {
            window: 10,
            broken_after_runs: 2,
            failing_share: 0.5,
            min_requests: 3,
            min_pages: 5,
            article_share_drop: 0.5,
            text_drop: 0.3,
        }
    }
}

/// How a source is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Degraded,
    Broken,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Degraded => "degraded",
            Status::Broken => "broken",
        }
    }
}

/// Which rule found a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    RobotsClosed,
    RobotsUnreachable,
    AllFailing,
    MostlyFailing,
    SeedFailing,
    ExtractionCollapsed,
    NoArticles,
    BotChallenge,
    PaymentRequired,
}

/// One problem, in words, with the run it started in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub status: Status,
    pub problem: Problem,
    pub reason: String,
    /// The first run of the series in which the condition held.
    pub since: String,
    /// How many runs (that touched the source and could show it) the series has lasted.
    pub runs: u32,
}

/// One run of a source's trend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub run_id: String,
    pub requests: u64,
    pub failed: u64,
    pub not_modified: u64,
    pub pages: u64,
    pub articles: u64,
    pub stored: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text_median: Option<u64>,
}

/// The judgement on one source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub source: String,
    pub status: Status,
    /// Worst first.
    pub findings: Vec<Finding>,
    /// Things worth knowing that do not change the status.
    pub notes: Vec<String>,
    /// The runs that touched the source, oldest first.
    pub trend: Vec<Point>,
}

impl Verdict {
    /// The worst finding's reason, or `None` when the source is ok.
    pub fn reason(&self) -> Option<&str> {
        self.findings.first().map(|f| f.reason.as_str())
    }
}

/// One run in a source's history: its id and what it saw of the source (if anything).
#[derive(Debug, Clone, Copy)]
pub struct RunRef<'a> {
    pub run_id: &'a str,
    pub source: Option<&'a SourceRun>,
}

/// Judge `source` (whose path prefix is `path`, `/` for a whole host) from
/// its runs, oldest first.
pub fn judge(source: &str, path: &str, runs: &[RunRef<'_>], t: &Health) -> Verdict {
    let touched: Vec<(&str, &SourceRun)> = runs
        .iter()
        .filter_map(|r| r.source.filter(|s| s.touched()).map(|s| (r.run_id, s)))
        .collect();
    let mut v = Verdict {
        source: source.to_string(),
        status: Status::Ok,
        findings: Vec::new(),
        notes: Vec::new(),
        trend: touched.iter().map(|(id, s)| point(id, s)).collect(),
    };
    let Some(&(_, last)) = touched.last() else {
        v.notes.push(format!(
            "no requests in the last {} runs: not judged",
            runs.len()
        ));
        return v;
    };
    let robots_blocked = robots_rules(&touched, path, t, &mut v);
    let turned = !robots_blocked && turned_rules(&touched, t, &mut v);
    let all_failing = turned || (!robots_blocked && failing_rules(&touched, t, &mut v));
    seed_rules(&touched, t, robots_blocked, all_failing, &mut v);
    extraction_rules(&touched, t, &mut v);
    if let Some(r) = &last.robots
        && let Some((prev_id, prev)) = touched[..touched.len() - 1]
            .iter()
            .rev()
            .find_map(|(id, s)| s.robots.as_ref().map(|p| (id, p)))
        && prev.hash != r.hash
        && prev.outcome == RobotsAccess::Parsed
        && r.outcome == RobotsAccess::Parsed
    {
        v.notes
            .push(format!("robots.txt changed after run {prev_id}"));
    }
    consent_notes(last, &mut v);
    v.findings
        .sort_by(|a, b| b.status.cmp(&a.status).then(a.since.cmp(&b.since)));
    v.status = v
        .findings
        .iter()
        .map(|f| f.status)
        .max()
        .unwrap_or(Status::Ok);
    v
}

fn point(run_id: &str, s: &SourceRun) -> Point {
    Point {
        run_id: run_id.to_string(),
        requests: s.answered(),
        failed: s.failed(),
        not_modified: s.answers.get(&Answer::NotModified).copied().unwrap_or(0),
        pages: s.pages + s.linked_pages,
        articles: s.articles + s.linked_articles,
        stored: s.stored,
        text_median: s.text_median.or(s.linked_text_median),
    }
}

/// The unbroken series of latest runs for which `holds` is true, counting
/// only runs for which `applies` is true. `(first run id, length)`.
fn streak<'a>(
    touched: &[(&'a str, &SourceRun)],
    applies: impl Fn(&SourceRun) -> bool,
    holds: impl Fn(&SourceRun) -> bool,
) -> Option<(&'a str, u32)> {
    let mut since = None;
    let mut n = 0;
    for (id, s) in touched.iter().rev().filter(|(_, s)| applies(s)) {
        if !holds(s) {
            break;
        }
        since = Some(*id);
        n += 1;
    }
    since.map(|id| (id, n))
}

fn lasting(n: u32, t: &Health) -> Status {
    if n >= t.broken_after_runs {
        Status::Broken
    } else {
        Status::Degraded
    }
}

fn since_words(since: &str, n: u32) -> String {
    if n >= 2 {
        format!("for {n} runs (since run {since})")
    } else {
        format!("since run {since}")
    }
}

/// robots.txt closing the path, or unreachable. Returns whether either fired.
fn robots_rules(touched: &[(&str, &SourceRun)], path: &str, t: &Health, v: &mut Verdict) -> bool {
    let has_robots = |s: &SourceRun| s.robots.is_some();
    let closed = |s: &SourceRun| {
        s.robots
            .as_ref()
            .is_some_and(|r| r.outcome == RobotsAccess::Parsed && !r.allows_path)
    };
    if let Some((since, n)) = streak(touched, has_robots, closed) {
        let ever_open = touched.iter().filter(|(_, s)| has_robots(s)).count() > n as usize;
        let reason = if ever_open {
            format!("robots.txt now disallows the source's path {path} (since run {since})")
        } else {
            format!("robots.txt disallows the source's path {path} (since run {since})")
        };
        v.findings.push(Finding {
            status: Status::Broken,
            problem: Problem::RobotsClosed,
            reason,
            since: since.to_string(),
            runs: n,
        });
        return true;
    }
    let unreachable = |s: &SourceRun| {
        s.robots
            .as_ref()
            .is_some_and(|r| r.outcome == RobotsAccess::Unreachable)
    };
    if let Some((since, n)) = streak(touched, has_robots, unreachable) {
        let detail = touched
            .last()
            .and_then(|(_, s)| s.robots.as_ref())
            .map(|r| r.detail.clone())
            .unwrap_or_default();
        v.findings.push(Finding {
            status: lasting(n, t),
            problem: Problem::RobotsUnreachable,
            reason: format!(
                "robots.txt unreachable ({detail}), so nothing may be fetched, {}",
                since_words(since, n)
            ),
            since: since.to_string(),
            runs: n,
        });
        return true;
    }
    false
}

/// Answers of publishers who turned the crawler away (their own rules judge them).
const CHALLENGE: Answer = Answer::Failed(FailureClass::Challenge);
const PAYMENT: Answer = Answer::Failed(FailureClass::PaymentRequired);

fn count(s: &SourceRun, a: Answer) -> u64 {
    s.answers.get(&a).copied().unwrap_or(0)
}

/// What the last run saw the publisher reserve (consent is the publisher's
/// to give: noted, never a problem), and the RSL licences it points to.
fn consent_notes(last: &SourceRun, v: &mut Verdict) {
    if !last.ai_reserved.is_empty() {
        let by: Vec<String> = last
            .ai_reserved
            .iter()
            .map(|(label, n)| format!("{label} ({n} articles)"))
            .collect();
        v.notes.push(format!("reserves AI use: {}", by.join(", ")));
    }
    if !last.licenses.is_empty() {
        v.notes
            .push(format!("RSL licence: {}", last.licenses.join(", ")));
    }
}

/// Bot challenges and `402 Payment Required`, each on every request, every
/// article (no page but seeds and listings got through), or some. Returns
/// whether one fired on every request or article (the failing rules then say nothing more).
fn turned_rules(touched: &[(&str, &SourceRun)], t: &Health, v: &mut Verdict) -> bool {
    let answered = |s: &SourceRun| s.answered() > 0;
    let Some(&(_, last)) = touched.iter().rev().find(|(_, s)| answered(s)) else {
        return false;
    };
    let mut every_fired = false;
    for (answer, problem) in [
        (CHALLENGE, Problem::BotChallenge),
        (PAYMENT, Problem::PaymentRequired),
    ] {
        let every = |s: &SourceRun| {
            let n = count(s, answer);
            n > 0 && (n == s.answered() || s.pages + s.linked_pages == 0)
        };
        let some = |s: &SourceRun| count(s, answer) > 0;
        let what = match problem {
            Problem::BotChallenge => "bot challenge".to_string(),
            _ => {
                let last_of = |f: fn(&SourceRun) -> Option<&str>| {
                    touched.iter().rev().find_map(|(_, s)| f(s))
                };
                crate::net::turned::payment_words(
                    last_of(|s| s.price.as_deref()),
                    last_of(|s| s.payment_error.as_deref()),
                    last_of(|s| s.payment_terms.as_deref()),
                )
            }
        };
        let n_last = count(last, answer);
        if let Some((since, n)) = streak(touched, answered, every) {
            let on = if n_last == last.answered() {
                "request"
            } else {
                "article"
            };
            let status = match problem {
                Problem::BotChallenge => lasting(n, t),
                _ => Status::Broken,
            };
            v.findings.push(Finding {
                status,
                problem,
                reason: format!("{what} on every {on} {}", since_words(since, n)),
                since: since.to_string(),
                runs: n,
            });
            every_fired = true;
        } else if let Some((since, n)) = streak(touched, answered, some) {
            let reason = format!(
                "{what} on {n_last} of {} requests {}",
                last.answered(),
                since_words(since, n)
            );
            let many = last.answered() >= t.min_requests
                && n_last as f64 >= t.failing_share * last.answered() as f64;
            if problem == Problem::PaymentRequired || many {
                v.findings.push(Finding {
                    status: Status::Degraded,
                    problem,
                    reason,
                    since: since.to_string(),
                    runs: n,
                });
            } else {
                v.notes.push(reason);
            }
        }
    }
    every_fired
}

fn failures(s: &SourceRun) -> Vec<(Answer, u64)> {
    let mut f: Vec<(Answer, u64)> = s
        .answers
        .iter()
        .filter(|(k, n)| {
            !k.is_fine() && !matches!(**k, Answer::ROBOTS | CHALLENGE | PAYMENT) && **n > 0
        })
        .map(|(k, n)| (*k, *n))
        .collect();
    f.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    f
}

fn list_failures(f: &[(Answer, u64)]) -> String {
    f.iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every request failing, or most of them. Returns whether "all failing" fired.
fn failing_rules(touched: &[(&str, &SourceRun)], t: &Health, v: &mut Verdict) -> bool {
    let turned = |s: &SourceRun| count(s, CHALLENGE) + count(s, PAYMENT);
    let answered = |s: &SourceRun| s.answered() > turned(s);
    let all_failed = |s: &SourceRun| {
        s.failed() == s.answered() && failures(s).iter().any(|(k, _)| !k.is_url_level())
    };
    let Some(&(_, last)) = touched.iter().rev().find(|(_, s)| answered(s)) else {
        return false;
    };
    let f = failures(last);
    if let Some((since, n)) = streak(touched, answered, all_failed) {
        let what = match f.as_slice() {
            [(k @ Answer::Status(_), _)] => format!("{k} on every request"),
            [(k, _)] => format!("every request failed ({k})"),
            _ => format!("every request failed ({})", list_failures(&f)),
        };
        v.findings.push(Finding {
            status: lasting(n, t),
            problem: Problem::AllFailing,
            reason: format!("{what} {}", since_words(since, n)),
            since: since.to_string(),
            runs: n,
        });
        return true;
    }
    let mostly = |s: &SourceRun| {
        let (failed, all) = (s.failed() - turned(s), s.answered() - turned(s));
        all >= t.min_requests && failed as f64 >= t.failing_share * all as f64
    };
    if let Some((since, n)) = streak(touched, answered, mostly) {
        let share =
            100.0 * (last.failed() - turned(last)) as f64 / (last.answered() - turned(last)) as f64;
        v.findings.push(Finding {
            status: Status::Degraded,
            problem: Problem::MostlyFailing,
            reason: format!(
                "{share:.0}% of requests failed ({}) {}",
                list_failures(&f),
                since_words(since, n)
            ),
            since: since.to_string(),
            runs: n,
        });
    }
    false
}

fn seed_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Feed => "feed",
        Kind::Sitemap => "sitemap",
        Kind::Page => "seed page",
    }
}

fn seed_in<'a>(s: &'a SourceRun, url: &str) -> Option<&'a SeedAnswer> {
    s.seeds.iter().find(|a| a.url == url)
}

/// Seeds that fail (dead, moved off the source) and seeds that moved but work.
fn seed_rules(
    touched: &[(&str, &SourceRun)],
    t: &Health,
    robots_blocked: bool,
    all_failing: bool,
    v: &mut Verdict,
) {
    let Some(&(_, last)) = touched.last() else {
        return;
    };
    let none_works = !last.seeds.is_empty() && last.seeds.iter().all(|a| !a.ok());
    for seed in &last.seeds {
        let word = seed_word(seed.kind);
        if seed.ok() {
            if let Some(to) = &seed.moved_to {
                v.notes.push(format!(
                    "{word} {} now redirects to {to}: put the new URL in config.yml",
                    seed.url
                ));
            }
            continue;
        }
        let own = seed.answer.is_url_level();
        // Covered by a host-wide rule already.
        if (robots_blocked && seed.answer == Answer::ROBOTS) || (all_failing && !own) {
            continue;
        }
        let Some((since, n)) = streak(
            touched,
            |s| seed_in(s, &seed.url).is_some(),
            |s| seed_in(s, &seed.url).is_some_and(|a| !a.ok()),
        ) else {
            continue;
        };
        let what = match (&seed.moved_to, seed.answer) {
            (Some(to), Answer::Failed(FailureClass::OutOfScope)) => {
                format!("redirects to {to}, outside the source,")
            }
            (_, Answer::ROBOTS) => "is disallowed by robots.txt".to_string(),
            (_, Answer::NotAListing) => {
                "answers with a web page, not a feed or sitemap,".to_string()
            }
            (_, Answer::BadListing) => "cannot be parsed".to_string(),
            (_, k @ Answer::Status(_)) => format!("answers {k}"),
            (_, k) => format!("fails ({k})"),
        };
        let status = if none_works && (own || n >= t.broken_after_runs) {
            Status::Broken
        } else {
            Status::Degraded
        };
        v.findings.push(Finding {
            status,
            problem: Problem::SeedFailing,
            reason: format!("{word} {} {what} {}", seed.url, since_words(since, n)),
            since: since.to_string(),
            runs: n,
        });
    }
}

/// The extraction signals of one population of a run's pages.
#[derive(Debug, Clone, Copy)]
struct Sig {
    pages: u64,
    articles: u64,
    text: Option<u64>,
}

impl Sig {
    /// Pages listed by feeds and sitemaps, or (`listed == false`) reached through links.
    fn of(s: &SourceRun, listed: bool) -> Sig {
        if listed {
            Sig {
                pages: s.pages,
                articles: s.articles,
                text: s.text_median,
            }
        } else {
            Sig {
                pages: s.linked_pages,
                articles: s.linked_articles,
                text: s.linked_text_median,
            }
        }
    }

    fn share(&self) -> f64 {
        self.articles as f64 / self.pages.max(1) as f64
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let m = xs.len() / 2;
    Some(if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    })
}

/// The usual article share and median text over some runs.
struct Usual {
    share: f64,
    text: Option<f64>,
}

fn usual(runs: &[Sig]) -> Usual {
    Usual {
        share: median(runs.iter().map(Sig::share).collect()).unwrap_or(0.0),
        text: median(
            runs.iter()
                .filter_map(|s| s.text.map(|t| t as f64))
                .collect(),
        ),
    }
}

fn collapsed(s: &Sig, u: &Usual, t: &Health) -> bool {
    let fewer = u.share > 0.0 && s.share() < u.share * t.article_share_drop;
    let shorter = match (s.text, u.text) {
        (Some(now), Some(before)) => before > 0.0 && (now as f64) < before * t.text_drop,
        _ => false,
    };
    fewer || shorter
}

/// Format a count with thousands separators: 4200 -> "4,200".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Pages no longer judged articles, or their text much shorter than usual.
/// Judged on the pages feeds and sitemaps listed when the source has enough
/// of them in some run, else on the pages reached through links (two
/// populations are never mixed: a home page's links are less often articles).
fn extraction_rules(touched: &[(&str, &SourceRun)], t: &Health, v: &mut Verdict) {
    let listed = touched.iter().any(|(_, s)| s.pages >= t.min_pages);
    let judged: Vec<(&str, Sig)> = touched
        .iter()
        .map(|(id, s)| (*id, Sig::of(s, listed)))
        .filter(|(_, s)| s.pages >= t.min_pages)
        .collect();
    let Some(&(last_id, last)) = judged.last() else {
        return;
    };
    // The longest series of latest judged runs that all collapsed against
    // the runs before the series.
    let mut found: Option<(usize, Usual)> = None;
    for start in (1..judged.len()).rev() {
        let before: Vec<Sig> = judged[..start].iter().map(|(_, s)| *s).collect();
        let u = usual(&before);
        if judged[start..].iter().all(|(_, s)| collapsed(s, &u, t)) {
            found = Some((start, u));
        } else {
            break;
        }
    }
    let text_words = |before: Option<f64>| match (before, last.text) {
        (Some(b), Some(now)) => format!(
            "median text {} -> {} characters",
            thousands(b.round() as u64),
            thousands(now)
        ),
        (None, Some(now)) => format!("median text {} characters", thousands(now)),
        _ => "no text".to_string(),
    };
    let Some((start, u)) = found else {
        if judged.len() == 1 && last.articles == 0 {
            v.findings.push(Finding {
                status: Status::Degraded,
                problem: Problem::NoArticles,
                reason: format!(
                    "none of {} pages was judged an article ({}) since run {last_id}",
                    last.pages,
                    text_words(None)
                ),
                since: last_id.to_string(),
                runs: 1,
            });
        }
        return;
    };
    let (since, n) = (judged[start].0, (judged.len() - start) as u32);
    let (status, what) = if last.articles == 0 {
        (
            Status::Broken,
            "pages no longer judged articles".to_string(),
        )
    } else if last.share() < u.share * t.article_share_drop {
        (
            Status::Degraded,
            format!(
                "fewer pages judged articles ({:.0}% -> {:.0}%)",
                100.0 * u.share,
                100.0 * last.share()
            ),
        )
    } else {
        (Status::Degraded, "extracted text much shorter".to_string())
    };
    v.findings.push(Finding {
        status,
        problem: Problem::ExtractionCollapsed,
        reason: format!("{what} {} ({})", since_words(since, n), text_words(u.text)),
        since: since.to_string(),
        runs: n,
    });
}

#[cfg(test)]
mod tests;
