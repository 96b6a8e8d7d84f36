//! The dashboard's picture of a run, folded event by event from `crawl.log`
//! (pure: no I/O). The server folds the log it has read so far into a [`Live`]
//! for `/summary`; the page then applies each new event from `/events` with
//! `apply` in `dashboard.html`, which mirrors [`Live::apply`] field for field.

use std::collections::{BTreeMap, VecDeque};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::record::event::{Done, EventKind, Fetch, RunStart, Stored};

/// Minutes of throughput history kept.
pub const MINUTES: usize = 180;
/// Latest stored articles kept for the feed.
pub const LATEST: usize = 50;

/// Aggregates of one run's log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Live {
    pub run_id: Option<String>,
    /// `t` of the `run_start` event.
    pub started_at: Option<String>,
    pub max_duration_s: Option<f64>,
    /// `t` of the newest event.
    pub(crate) last_t: Option<String>,
    pub events: u64,
    /// `fetch` events.
    pub fetched: u64,
    pub bytes: u64,
    pub stored: u64,
    pub rejected: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Latest queue size reported (`progress`'s `queue`, `done`'s `queue_left`).
    pub queue: Option<u64>,
    /// `stopped_by` of the `done` event (`?` when unreadable); `None` while running.
    pub stopped_by: Option<String>,
    pub by_domain: BTreeMap<String, u64>,
    pub by_year: BTreeMap<String, u64>,
    /// Minute (`t[..16]`, e.g. `2026-11-29T20:05`) -> `[fetched, stored]`.
    pub minutes: BTreeMap<String, [u64; 2]>,
    /// Newest last.
    pub latest: VecDeque<Hit>,
}

/// One stored article, for the feed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Hit {
    pub t: String,
    pub url: String,
    pub domain: String,
    pub title: String,
    pub date: Option<String>,
}

/// What every line may carry, whatever its kind; a field of the wrong type
/// reads as absent, as in the page's script.
#[derive(Deserialize)]
struct Line {
    event: EventKind,
    #[serde(default, deserialize_with = "lenient")]
    t: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    queue: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    queue_left: Option<u64>,
}

fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(T::deserialize(Value::deserialize(d)?).ok())
}

impl Live {
    /// Fold one event. A line without an `event` kind is ignored; a line of
    /// a known kind with fields the schema does not expect counts with what
    /// could be read (`Live::default` for the rest).
    pub fn apply(&mut self, ev: &Value) {
        let Ok(line) = Line::deserialize(ev) else {
            return;
        };
        let t = line.t;
        self.events += 1;
        if t.is_some() {
            self.last_t.clone_from(&t);
        }
        if let Some(q) = line.queue_left.or(line.queue) {
            self.queue = Some(q);
        }
        let mut minute = |slot: usize| {
            if let Some(m) = t.as_deref().and_then(|t| t.get(..16)) {
                self.minutes.entry(m.to_string()).or_insert([0, 0])[slot] += 1;
                while self.minutes.len() > MINUTES {
                    self.minutes.pop_first();
                }
            }
        };
        match line.event {
            EventKind::RunStart => {
                let start = RunStart::deserialize(ev).unwrap_or_default();
                *self = Live {
                    run_id: Some(start.run_id).filter(|r| !r.is_empty()),
                    started_at: t.clone(),
                    max_duration_s: Some(start.max_duration_s as f64),
                    last_t: t,
                    events: 1,
                    ..Live::default()
                };
            }
            EventKind::Fetch => {
                minute(0);
                self.fetched += 1;
                self.bytes += Fetch::deserialize(ev).unwrap_or_default().bytes;
            }
            EventKind::Stored => {
                minute(1);
                self.stored += 1;
                let s = Stored::deserialize(ev).unwrap_or_default();
                *self.by_domain.entry(s.domain.clone()).or_default() += 1;
                let year = s
                    .year
                    .map_or_else(|| "unknown".to_string(), |y| y.to_string());
                *self.by_year.entry(year).or_default() += 1;
                self.latest.push_back(Hit {
                    t: t.unwrap_or_default(),
                    url: s.url,
                    domain: s.domain,
                    title: s.title,
                    date: s.date,
                });
                if self.latest.len() > LATEST {
                    self.latest.pop_front();
                }
            }
            EventKind::Rejected => self.rejected += 1,
            EventKind::Error => self.errors += 1,
            EventKind::Warning => self.warnings += 1,
            EventKind::Done => {
                self.stopped_by = Some(
                    Done::deserialize(ev)
                        .map_or_else(|_| "?".to_string(), |d| d.stopped_by.as_str().to_string()),
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn folds_a_run() {
        let events = [
            json!({"v":1,"t":"2026-11-29T19:00:00.000Z","event":"fetch","url":"x"}),
            json!({"v":1,"t":"2026-11-29T20:00:00.000Z","event":"run_start","run_id":"r1","max_duration_s":2400}),
            json!({"v":1,"t":"2026-11-29T20:00:01.000Z","event":"fetch","url":"u","status":200,"bytes":1000}),
            json!({"v":1,"t":"2026-11-29T20:00:02.000Z","event":"stored","url":"u","domain":"a.com","title":"T","year":2026,"date":"2026-11-28"}),
            json!({"v":1,"t":"2026-11-29T20:01:02.000Z","event":"stored","url":"v","domain":"a.com","title":"U"}),
            json!({"v":1,"t":"2026-11-29T20:01:03.000Z","event":"rejected","url":"w","reason":"not relevant"}),
            json!({"v":1,"t":"2026-11-29T20:01:04.000Z","event":"error","url":"w","class":"timeout"}),
            json!({"t":"2026-11-29T20:01:05.000Z","event":"mystery","queue":12}),
            json!({"t":"2026-11-29T20:01:06.000Z","event":"discovery","queued":3}),
            json!({"no":"event"}),
            json!({"v":1,"t":"2026-11-29T20:02:00.000Z","event":"done","stopped_by":"max_pages","queue_left":7}),
        ];
        let mut live = Live::default();
        for e in &events {
            live.apply(e);
        }
        assert_eq!(live.run_id.as_deref(), Some("r1"));
        assert_eq!(live.max_duration_s, Some(2400.0));
        assert_eq!((live.fetched, live.bytes, live.stored), (1, 1000, 2));
        assert_eq!((live.rejected, live.errors, live.events), (1, 1, 9));
        assert_eq!(live.queue, Some(7));
        assert_eq!(live.stopped_by.as_deref(), Some("max_pages"));
        assert_eq!(live.by_domain["a.com"], 2);
        assert_eq!(live.by_year["2026"], 1);
        assert_eq!(live.by_year["unknown"], 1);
        assert_eq!(live.minutes["2026-11-29T20:00"], [1, 1]);
        assert_eq!(live.minutes["2026-11-29T20:01"], [0, 1]);
        assert!(!live.minutes.contains_key("2026-11-29T19:00"));
        assert_eq!(live.latest.back().map(|h| h.title.as_str()), Some("U"));
    }

    #[test]
    fn history_is_bounded() {
        let mut live = Live::default();
        for i in 0..(LATEST + 5) {
            let t = format!("2026-11-29T{:02}:{:02}:00Z", i / 60, i % 60);
            live.apply(&json!({"t": t, "event": "stored", "domain": "a", "url": i.to_string()}));
        }
        for i in 0..(MINUTES + 10) {
            let t = format!("2026-11-30T{:02}:{:02}:00Z", i / 60, i % 60);
            live.apply(&json!({"t": t, "event": "fetch"}));
        }
        assert_eq!(live.latest.len(), LATEST);
        assert_eq!(live.latest.front().map(|h| h.url.as_str()), Some("5"));
        assert_eq!(live.minutes.len(), MINUTES);
    }
}
