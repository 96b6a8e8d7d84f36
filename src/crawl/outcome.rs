//! The one classification of each finished request, and the loop's
//! decisions that follow from it alone. [`classify`] turns a [`Done`] into
//! an [`Answer`], which the host counters (`HostCounters::record`), the
//! health tally (`Tally::observe`) and the reach tracker (`Reach::record`)
//! each record; [`error_plan`] and [`status_plan`] say what the engine does
//! with a failed fetch and with a non-2xx status. Pure: no I/O, no state.

use std::time::Duration;

use super::worker::{Body, Done};
use crate::frontier::{Kind, Origin, Outcome};
use crate::net::FetchError;
use crate::record::Answer;
use crate::store::seen::Failure;
use crate::url::Url;

/// Times one URL is requeued after a 429/503 with Retry-After in one run;
/// after that it counts as an error and waits for the next run.
pub(crate) const MAX_REQUEUES: u8 = 3;

/// How a finished job went, in the one vocabulary every counter shares.
pub(crate) fn classify(done: &Done) -> Answer {
    let (_, body) = match &done.result {
        Err(e) => return Answer::Failed(e.class()),
        Ok(ok) => ok,
    };
    match body {
        Body::NotModified => Answer::NotModified,
        Body::Status(code) => Answer::status(*code),
        Body::Turned(t) => Answer::Failed(t.class()),
        Body::BadListing(_) => Answer::BadListing,
        Body::Panicked(_) => Answer::Panicked,
        Body::Listing(_) => Answer::Success,
        // A feed or sitemap seed that now answers with a page (moved, gone to the home page).
        Body::Page(_)
            if done.job.entry.origin == Origin::Seed && done.job.entry.kind != Kind::Page =>
        {
            Answer::NotAListing
        }
        Body::Page(_) => Answer::Success,
    }
}

/// What the engine does with a failed fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorPlan {
    /// Not sent (the fetch budget is spent): back in the queue for `--resume`.
    PutBack,
    /// robots.txt disallows the URL.
    Disallowed,
    /// A redirect to another partition's host: its owner fetches it.
    HandOver(Url),
    /// The host is rested: its queue waits for the next run, its cut-off stays.
    Rest,
    /// Will not go away by tomorrow: remembered in the seen-set with its class.
    Remember(Failure),
    /// The network failed: tried again next run (a source's failure keeps
    /// its host's cut-off).
    Network,
    /// Anything else: counted, nothing remembered.
    Other,
}

impl ErrorPlan {
    /// The scheduler's outcome of the job.
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            ErrorPlan::PutBack | ErrorPlan::Disallowed | ErrorPlan::HandOver(_) => Outcome::Miss,
            ErrorPlan::Rest | ErrorPlan::Remember(_) | ErrorPlan::Network | ErrorPlan::Other => {
                Outcome::Error
            }
        }
    }

    /// Does it count as an error of the run (`errors` in the `progress` and `done` events)?
    pub(crate) fn counts_as_error(&self) -> bool {
        matches!(
            self,
            ErrorPlan::Remember(_) | ErrorPlan::Network | ErrorPlan::Other
        )
    }
}

/// The plan for `e`; `owns(url)`: this runner owns `url`'s host.
pub(crate) fn error_plan(e: &FetchError, owns: impl Fn(&Url) -> bool) -> ErrorPlan {
    match e {
        FetchError::Budget => ErrorPlan::PutBack,
        FetchError::RobotsDisallowed(_) => ErrorPlan::Disallowed,
        FetchError::OutOfScope(target) if !owns(target) => ErrorPlan::HandOver(target.clone()),
        FetchError::Rested => ErrorPlan::Rest,
        FetchError::RedirectLoop => ErrorPlan::Remember(Failure::RedirectLoop),
        FetchError::TooManyRedirects => ErrorPlan::Remember(Failure::TooManyRedirects),
        FetchError::TooLarge => ErrorPlan::Remember(Failure::TooLarge),
        FetchError::NotHtml(_) => ErrorPlan::Remember(Failure::NotHtml),
        e if e.is_network() => ErrorPlan::Network,
        _ => ErrorPlan::Other,
    }
}

/// What the engine does with a status that is neither 2xx nor 304.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusPlan {
    /// Asked to come back soon (429 or 503 with a short Retry-After, tries
    /// left): requeued in this run; the host is paused.
    Requeue,
    /// Transient (429, 5xx): not remembered, like a timeout; a source's
    /// failure keeps its host's cut-off, a page is kept for the next run.
    Transient,
    /// 404 and 410: gone for good (remembered as such).
    Gone,
    /// Any other status: remembered as a miss, revisited later.
    Miss,
}

impl StatusPlan {
    /// The scheduler's outcome of the job.
    pub(crate) fn outcome(self) -> Outcome {
        match self {
            StatusPlan::Requeue | StatusPlan::Transient => Outcome::Error,
            StatusPlan::Gone | StatusPlan::Miss => Outcome::Miss,
        }
    }
}

/// The plan for `code`, given the response's Retry-After, the longest one
/// honoured in a run, and how often the URL was requeued already.
pub(crate) fn status_plan(
    code: u16,
    retry_after: Option<Duration>,
    max_retry_after: Duration,
    tries: u8,
) -> StatusPlan {
    if may_requeue(code, retry_after, max_retry_after) && tries < MAX_REQUEUES {
        StatusPlan::Requeue
    } else if code == 429 || code >= 500 {
        StatusPlan::Transient
    } else if matches!(code, 404 | 410) {
        StatusPlan::Gone
    } else {
        StatusPlan::Miss
    }
}

/// A 429 or 503 whose Retry-After is short enough to wait for in this run.
pub(crate) fn may_requeue(
    code: u16,
    retry_after: Option<Duration>,
    max_retry_after: Duration,
) -> bool {
    matches!(code, 429 | 503) && retry_after.is_some_and(|ra| ra <= max_retry_after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::worker::{Job, Meta};
    use crate::discover::{Listing, Parsed};
    use crate::frontier::Entry;
    use crate::net::turned::Turned;
    use crate::record::FailureClass;

    fn url(s: &str) -> Url {
        crate::url::parse(s).unwrap()
    }

    fn done(kind: Kind, origin: Origin, result: Result<Body, FetchError>) -> Done {
        let u = url("https://a.test/x");
        let meta = Meta::answered(u.clone(), 200);
        Done {
            job: Job {
                host: "a.test".into(),
                url: u.clone(),
                entry: Entry::new(u.to_string(), kind, origin, 0),
                etag: None,
                last_modified: None,
                freed: false,
            },
            robots: None,
            result: result.map(|b| (meta, b)),
        }
    }

    fn page() -> Body {
        let rule = crate::relevance::Rule::new(&crate::config::Keywords::default());
        let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let p = crate::extract::extract(b"<html><p>A page.</p></html>", None, None, &rule, today);
        Body::Page(Box::new(p))
    }

    fn listing() -> Body {
        Body::Listing(Parsed {
            listing: Listing::Feed(vec![]),
            cut: 0,
            partial: None,
        })
    }

    /// One answer per kind of result, with the seed-listing case that
    /// answers a page.
    #[test]
    fn each_result_has_one_answer() {
        use Kind::{Feed, Page, Sitemap};
        use Origin::{Listed, Relevant, Seed};
        let challenge = Turned::Challenge {
            status: 403,
            marker: "cf".into(),
        };
        let table: Vec<(Kind, Origin, Result<Body, FetchError>, Answer)> = vec![
            (Page, Relevant, Ok(page()), Answer::Success),
            (Page, Seed, Ok(page()), Answer::Success),
            (Feed, Seed, Ok(page()), Answer::NotAListing),
            (Sitemap, Listed, Ok(page()), Answer::Success),
            (Feed, Seed, Ok(listing()), Answer::Success),
            (Page, Listed, Ok(Body::NotModified), Answer::NotModified),
            (Page, Listed, Ok(Body::Status(404)), Answer::Status(404)),
            (Feed, Seed, Ok(Body::Status(503)), Answer::Status(503)),
            (
                Feed,
                Seed,
                Ok(Body::BadListing("x".into())),
                Answer::BadListing,
            ),
            (
                Page,
                Listed,
                Ok(Body::Panicked("boom".into())),
                Answer::Panicked,
            ),
            (
                Page,
                Listed,
                Ok(Body::Turned(challenge)),
                Answer::Failed(FailureClass::Challenge),
            ),
            (
                Page,
                Listed,
                Ok(Body::Turned(Turned::Payment {
                    price: None,
                    error: None,
                    terms: None,
                })),
                Answer::Failed(FailureClass::PaymentRequired),
            ),
            (
                Page,
                Listed,
                Err(FetchError::Timeout),
                Answer::Failed(FailureClass::Timeout),
            ),
            (
                Page,
                Listed,
                Err(FetchError::Budget),
                Answer::Failed(FailureClass::Budget),
            ),
            (
                Page,
                Listed,
                Err(FetchError::RobotsDisallowed(url("https://a.test/x"))),
                Answer::ROBOTS,
            ),
        ];
        for (kind, origin, result, want) in table {
            let d = done(kind, origin, result);
            assert_eq!(classify(&d), want, "{kind:?} {origin:?}");
        }
    }

    #[test]
    fn failed_fetches_have_their_plan() {
        let ours = url("https://a.test/moved");
        let theirs = url("https://b.test/moved");
        let owns = |u: &Url| u.host_str() == Some("a.test");
        let table = [
            (FetchError::Budget, ErrorPlan::PutBack, Outcome::Miss, false),
            (
                FetchError::RobotsDisallowed(ours.clone()),
                ErrorPlan::Disallowed,
                Outcome::Miss,
                false,
            ),
            (
                FetchError::OutOfScope(theirs.clone()),
                ErrorPlan::HandOver(theirs.clone()),
                Outcome::Miss,
                false,
            ),
            // A redirect out of scope on a host this runner owns: just an error.
            (
                FetchError::OutOfScope(ours),
                ErrorPlan::Other,
                Outcome::Error,
                true,
            ),
            (FetchError::Rested, ErrorPlan::Rest, Outcome::Error, false),
            (
                FetchError::RedirectLoop,
                ErrorPlan::Remember(Failure::RedirectLoop),
                Outcome::Error,
                true,
            ),
            (
                FetchError::TooManyRedirects,
                ErrorPlan::Remember(Failure::TooManyRedirects),
                Outcome::Error,
                true,
            ),
            (
                FetchError::TooLarge,
                ErrorPlan::Remember(Failure::TooLarge),
                Outcome::Error,
                true,
            ),
            (
                FetchError::NotHtml("image/png".into()),
                ErrorPlan::Remember(Failure::NotHtml),
                Outcome::Error,
                true,
            ),
            (
                FetchError::Timeout,
                ErrorPlan::Network,
                Outcome::Error,
                true,
            ),
            (
                FetchError::Dns("x".into()),
                ErrorPlan::Network,
                Outcome::Error,
                true,
            ),
            (
                FetchError::Body("reset".into()),
                ErrorPlan::Network,
                Outcome::Error,
                true,
            ),
            (FetchError::Scheme, ErrorPlan::Other, Outcome::Error, true),
            (
                FetchError::PrivateAddress("10.0.0.1".into()),
                ErrorPlan::Other,
                Outcome::Error,
                true,
            ),
        ];
        for (e, plan, outcome, error) in table {
            let got = error_plan(&e, owns);
            assert_eq!(got, plan, "{e}");
            assert_eq!(got.outcome(), outcome, "{e}");
            assert_eq!(got.counts_as_error(), error, "{e}");
            // The network plans are exactly the network classes.
            assert_eq!(got == ErrorPlan::Network, e.class().is_network(), "{e}");
        }
    }

    #[test]
    fn statuses_have_their_plan() {
        let max = Duration::from_secs(60);
        let soon = Some(Duration::from_secs(5));
        let late = Some(Duration::from_secs(600));
        let table = [
            (429, soon, 0, StatusPlan::Requeue),
            (503, soon, 2, StatusPlan::Requeue),
            (503, soon, MAX_REQUEUES, StatusPlan::Transient),
            (503, late, 0, StatusPlan::Transient),
            (429, None, 0, StatusPlan::Transient),
            (500, soon, 0, StatusPlan::Transient),
            (502, None, 0, StatusPlan::Transient),
            (404, soon, 0, StatusPlan::Gone),
            (410, None, 0, StatusPlan::Gone),
            (403, None, 0, StatusPlan::Miss),
            (301, None, 0, StatusPlan::Miss),
        ];
        for (code, retry_after, tries, want) in table {
            let got = status_plan(code, retry_after, max, tries);
            assert_eq!(got, want, "{code} {retry_after:?} {tries}");
            let error = code == 429 || code >= 500;
            let outcome = if error { Outcome::Error } else { Outcome::Miss };
            assert_eq!(got.outcome(), outcome, "{code}");
        }
    }
}
