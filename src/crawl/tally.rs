//! This run's source-health records: what the crawl saw of each `sources:`
//! entry (requests and answers, robots.txt, seeds, extraction signals), filled
//! from every finished job and saved as `state/health/<run-id>.json`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::worker::{Body, Done, Job};
use crate::config::Config;
use crate::discover::Listing;
use crate::extract::Page;
use crate::frontier::{Kind, Origin};
use crate::health::{RobotsSeen, RunHealth, SeedAnswer};
use crate::net::turned::Turned;
use crate::net::{FetchError, Robots};
use crate::record::{Answer, FailureClass, StopReason};
use crate::source::Sources;
use crate::url::Url;

/// Collects one run's [`RunHealth`].
#[derive(Debug)]
pub(crate) struct Tally {
    index: Sources,
    run: RunHealth,
    /// Text lengths (characters) of the pages counted, per source and
    /// population (listed by a feed or sitemap, or linked).
    texts: HashMap<(String, bool), Vec<u64>>,
}

impl Tally {
    pub(crate) fn new(config: &Config, run_id: &str, started_at: DateTime<Utc>) -> Tally {
        Tally {
            index: Sources::new(&config.sources),
            run: RunHealth::new(run_id, started_at),
            texts: HashMap::new(),
        }
    }

    /// Count a finished job against its source; `answer` is its one
    /// classification (`crawl::outcome::classify`).
    pub(crate) fn observe(&mut self, done: &Done, answer: Answer) {
        let job = &done.job;
        if let Some(r) = &done.robots {
            self.robots(&job.url, r);
        }
        let Some(key) = self.index.source_of(&job.url).map(str::to_string) else {
            return;
        };
        let s = self.run.sources.entry(key.clone()).or_default();
        // Not sent: the budget is spent or the host rested (the source is listed all the same).
        if matches!(
            answer,
            Answer::Failed(FailureClass::Budget | FailureClass::Rested)
        ) {
            return;
        }
        // A URL robots.txt kept the crawler from is not a request.
        s.requests += u64::from(answer != Answer::ROBOTS);
        let (mut kind, mut entries, mut moved_to) = (job.entry.kind, None, None);
        match &done.result {
            Err(FetchError::OutOfScope(to)) => moved_to = Some(to.to_string()),
            Err(_) => {}
            Ok((meta, body)) => {
                moved_to = (!meta.redirects.is_empty()).then(|| meta.url.to_string());
                match body {
                    Body::Turned(t @ Turned::Payment { .. }) => payment(s, t),
                    Body::Listing(parsed) => {
                        kind = match parsed.listing {
                            Listing::Feed(_) => Kind::Feed,
                            Listing::Sitemap { .. } => Kind::Sitemap,
                        };
                        entries = Some(parsed.listing.len() as u64);
                    }
                    Body::Page(page) => {
                        if answer == Answer::Success {
                            kind = Kind::Page;
                        }
                        if page.is_article && page.relevance.relevant {
                            reserved(s, &meta.signals);
                        }
                        self.page(&key, job, page);
                    }
                    _ => {}
                }
            }
        }
        let s = self.run.sources.entry(key).or_default();
        // A seed that is not a listing but answered a listing still counts as one answer.
        s.answer(match answer {
            Answer::NotAListing | Answer::BadListing => Answer::Success,
            a => a,
        });
        if job.entry.origin == Origin::Seed {
            let a = SeedAnswer {
                url: job.url.to_string(),
                kind,
                answer,
                entries,
                moved_to,
            };
            match s.seeds.iter_mut().find(|x| x.url == a.url) {
                Some(old) => *old = a,
                None => s.seeds.push(a),
            }
        }
    }

    /// A page that is not a seed counts for its source's pages and
    /// articles, by population (listed by a feed or sitemap, or linked).
    fn page(&mut self, key: &str, job: &Job, page: &Page) {
        if job.entry.reads_source() {
            return;
        }
        let s = self.run.sources.entry(key.to_string()).or_default();
        let listed = job.entry.origin == Origin::Listed;
        let article = u64::from(page.is_article);
        if listed {
            s.pages += 1;
            s.articles += article;
            s.relevant += u64::from(page.is_article && page.relevance.relevant);
        } else {
            s.linked_pages += 1;
            s.linked_articles += article;
        }
        self.texts
            .entry((key.to_string(), listed))
            .or_default()
            .push(page.text.chars().count() as u64);
    }

    /// The first robots.txt seen on a host, for every source on it.
    fn robots(&mut self, u: &Url, r: &Robots) {
        let Some(host) = u.host_str() else {
            return;
        };
        let on_host: Vec<(String, String)> = self
            .index
            .on_host(host)
            .map(|(k, p)| (k.to_string(), p.to_string()))
            .collect();
        for (key, path) in on_host {
            let s = self.run.sources.entry(key).or_default();
            if s.robots.is_some() {
                continue;
            }
            // The path itself and what lies under it (`Disallow: /news/`
            // closes a source whose path is `/news` as surely as `/news`).
            let mut root = u.clone();
            root.set_query(None);
            root.set_fragment(None);
            let mut allows = true;
            for p in [path.clone(), format!("{}/", path.trim_end_matches('/'))] {
                root.set_path(&p);
                allows &= r.allowed(&root);
            }
            let (outcome, detail) = r.outcome.access();
            s.robots = Some(RobotsSeen {
                outcome,
                detail,
                hash: crate::store::consent::robots_hash_hex(r.hash),
                allows_path: allows,
            });
        }
    }

    /// An article from `url` was stored.
    pub(crate) fn stored(&mut self, url: &Url) {
        if let Some(key) = self.index.source_of(url) {
            self.run.sources.entry(key.to_string()).or_default().stored += 1;
        }
    }

    /// Seeds that failed or now redirect, by source: for the run summary.
    pub(crate) fn seed_problems(&self) -> Vec<(String, SeedAnswer)> {
        self.run
            .sources
            .iter()
            .flat_map(|(k, s)| {
                s.seeds
                    .iter()
                    .filter(|a| !a.ok() || a.moved_to.is_some())
                    .map(move |a| (k.clone(), a.clone()))
            })
            .collect()
    }

    /// The finished records (medians computed).
    pub(crate) fn finish(
        &mut self,
        finished_at: DateTime<Utc>,
        stopped_by: StopReason,
    ) -> RunHealth {
        let mut run = std::mem::replace(&mut self.run, RunHealth::new("", finished_at));
        for ((key, listed), mut lens) in self.texts.drain() {
            lens.sort_unstable();
            if let Some(s) = run.sources.get_mut(&key)
                && !lens.is_empty()
            {
                let median = Some(lens[lens.len() / 2]);
                if listed {
                    s.text_median = median;
                } else {
                    s.linked_text_median = median;
                }
            }
        }
        run.run.finished_at = Some(finished_at);
        run.run.stopped_by = Some(stopped_by.into());
        run
    }
}

/// What a `402 Payment Required` asked, kept for the source (the latest wins).
fn payment(s: &mut crate::health::SourceRun, t: &Turned) {
    if let Turned::Payment {
        price,
        error,
        terms,
    } = t
    {
        s.price = price.clone().or(s.price.take());
        s.payment_error = error.clone().or(s.payment_error.take());
        s.payment_terms = terms.clone().or(s.payment_terms.take());
    }
}

/// A relevant article's reservations and licences, counted for its source.
fn reserved(s: &mut crate::health::SourceRun, signals: &crate::consent::Signals) {
    for label in signals.reserving() {
        *s.ai_reserved.entry(label).or_default() += 1;
    }
    for (_, l) in &signals.licenses {
        if !s.licenses.contains(l) {
            s.licenses.push(l.clone());
        }
    }
}
