//! The binary's display of a running crawl's progress on stderr: an
//! `indicatif` bar when stderr is a terminal, otherwise (CI, launchd, a pipe)
//! one plain status line every 30 seconds. The engine reports through
//! [`scraper::crawl::Progress`] as often as it likes; a report only stores
//! the numbers unless a redraw is due.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::print::stats::{count, duration};
use scraper::crawl::Totals as Counts;
use scraper::record::StopReason;

/// How often a plain status line is written when stderr is not a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(30);
/// Minimum time between two redraws of the bar.
const DRAW_EVERY: Duration = Duration::from_millis(250);
/// Window over which pages per minute are measured.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// Where the progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An `indicatif` bar on stderr.
    Bar,
    /// A plain line on stderr every [`LINE_EVERY`].
    Lines,
}

enum Display {
    Bar(ProgressBar),
    Lines {
        out: Box<dyn Write + Send>,
        last: Instant,
    },
}

/// The crawl's progress display.
pub struct Progress {
    started: Instant,
    max: Option<Duration>,
    display: Display,
    counts: Counts,
    last_draw: Option<Instant>,
    /// `(since start, fetched)`, one sample a second at most, over [`RATE_WINDOW`].
    samples: VecDeque<(Duration, u64)>,
    finished: bool,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise. `max_duration`
    /// is the run's time box (`--max-duration`), shown as elapsed / budget.
    pub fn new(max_duration: Option<Duration>) -> Progress {
        let mode = if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        };
        Progress::with_mode(mode, max_duration)
    }

    /// A display of a chosen kind.
    pub fn with_mode(mode: Mode, max_duration: Option<Duration>) -> Progress {
        let display = match mode {
            Mode::Bar => Display::Bar(bar(max_duration)),
            Mode::Lines => Display::Lines {
                out: Box::new(std::io::stderr()),
                last: Instant::now(),
            },
        };
        Progress::from_display(display, max_duration, Instant::now())
    }

    fn from_display(display: Display, max: Option<Duration>, started: Instant) -> Progress {
        Progress {
            started,
            max,
            display,
            counts: Counts::default(),
            last_draw: None,
            samples: VecDeque::new(),
            finished: false,
        }
    }

    /// Record the current totals; redraws at most every 250 ms (bar) or
    /// writes a line every 30 s (plain). Call it at least every few seconds.
    pub fn update(&mut self, counts: Counts) {
        self.counts = counts;
        self.tick(Instant::now());
    }

    /// The line shown now.
    pub fn line(&self) -> String {
        let elapsed = self.last_draw.unwrap_or(self.started) - self.started;
        status_line(&self.counts, elapsed, self.max, self.rate())
    }

    /// Final line: the totals and what stopped the run. Later calls do nothing.
    pub fn finish(&mut self, stopped_by: StopReason) {
        if self.finished {
            return;
        }
        self.finished = true;
        let now = Instant::now();
        self.sample(now);
        self.last_draw = Some(now);
        let line = format!("{}; stopped by {stopped_by}", self.line());
        match &mut self.display {
            Display::Bar(pb) => pb.finish_with_message(line),
            Display::Lines { out, .. } => {
                let _ = writeln!(out, "{line}");
            }
        }
    }

    fn tick(&mut self, now: Instant) {
        if self.last_draw.is_some_and(|t| now - t < DRAW_EVERY) {
            return;
        }
        self.sample(now);
        match &self.display {
            Display::Bar(pb) => {
                self.last_draw = Some(now);
                let elapsed = now - self.started;
                pb.set_position(elapsed.as_secs());
                pb.set_message(progress_message(&self.counts, self.rate()));
            }
            Display::Lines { last, .. } => {
                if now - *last < LINE_EVERY {
                    return;
                }
                self.last_draw = Some(now);
                let line = self.line();
                if let Display::Lines { out, last } = &mut self.display {
                    *last = now;
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }

    fn sample(&mut self, now: Instant) {
        let at = now - self.started;
        if self
            .samples
            .back()
            .is_some_and(|(t, _)| at.saturating_sub(*t) < Duration::from_secs(1))
        {
            return;
        }
        self.samples.push_back((at, self.counts.fetched));
        while self
            .samples
            .front()
            .is_some_and(|(t, _)| at.saturating_sub(*t) > RATE_WINDOW)
        {
            self.samples.pop_front();
        }
    }

    /// Pages per minute over the last minute; `None` until 5 s of samples exist.
    fn rate(&self) -> Option<f64> {
        let (t0, f0) = *self.samples.front()?;
        let (t1, f1) = *self.samples.back()?;
        let span = (t1 - t0).as_secs_f64();
        (span >= 5.0).then(|| f1.saturating_sub(f0) as f64 * 60.0 / span)
    }
}

impl scraper::crawl::Progress for Progress {
    fn update(&mut self, totals: Counts) {
        Progress::update(self, totals);
    }

    fn finish(&mut self, stopped_by: StopReason) {
        Progress::finish(self, stopped_by);
    }
}

fn bar(max: Option<Duration>) -> ProgressBar {
    let (pb, template) = match max {
        Some(m) => (
            ProgressBar::new(m.as_secs().max(1)),
            "{spinner} [{elapsed_precise}] {wide_bar} {msg}",
        ),
        None => (
            ProgressBar::no_length(),
            "{spinner} [{elapsed_precise}] {msg}",
        ),
    };
    // The templates above are fixed and valid; fall back to the default style anyway.
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_draw_target(ProgressDrawTarget::stderr());
    pb.enable_steady_tick(Duration::from_millis(500));
    pb
}

/// The bar's message: counts and rate.
fn progress_message(c: &Counts, per_min: Option<f64>) -> String {
    let rate = per_min.map_or_else(String::new, |r| format!(" ({r:.0}/min)"));
    format!(
        "fetched {}{rate}, stored {}, queue {}, requests {}",
        count(c.fetched),
        count(c.stored),
        count(c.queued as u64),
        count(c.requests)
    )
}

/// One plain status line, e.g.
/// `[12m30s / 40m00s] fetched 1,234 (98/min), stored 56, queue 789, requests 1,400`.
pub fn status_line(
    c: &Counts,
    elapsed: Duration,
    max: Option<Duration>,
    per_min: Option<f64>,
) -> String {
    let clock = match max {
        Some(m) => format!("{} / {}", duration(elapsed), duration(m)),
        None => duration(elapsed),
    };
    format!("[{clock}] {}", progress_message(c, per_min))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn status_lines_read_well() {
        let c = Counts {
            fetched: 1234,
            stored: 56,
            queued: 789,
            requests: 1400,
        };
        let cases = [
            (
                750,
                Some(2400),
                Some(97.6),
                "[12m30s / 40m00s] fetched 1,234 (98/min), stored 56, queue 789, requests 1,400",
            ),
            (
                5,
                None,
                None,
                "[5s] fetched 1,234, stored 56, queue 789, requests 1,400",
            ),
        ];
        for (elapsed, max, rate, want) in cases {
            let got = status_line(
                &c,
                Duration::from_secs(elapsed),
                max.map(Duration::from_secs),
                rate,
            );
            assert_eq!(got, want);
        }
    }

    #[test]
    fn plain_lines_come_every_30_seconds_with_a_rate() {
        let sink = Sink::default();
        let t0 = Instant::now();
        let display = Display::Lines {
            out: Box::new(sink.clone()),
            last: t0,
        };
        let mut p = Progress::from_display(display, Some(Duration::from_secs(600)), t0);
        for s in 0..=65u64 {
            p.counts = Counts {
                fetched: s * 2,
                stored: s / 10,
                queued: 100,
                requests: s * 2 + 3,
            };
            p.tick(t0 + Duration::from_secs(s));
        }
        p.finish(StopReason::MaxDuration);
        p.finish(StopReason::Interrupted);
        let out = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<_> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(
            lines[0].starts_with("[30s / 10m00s] fetched 60 (120/min)"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("[1m00s / 10m00s] fetched 120"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].ends_with("; stopped by max_duration"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn the_bar_does_not_panic() {
        fn send<T: Send>() {}
        send::<Progress>();
        let mut b = Progress::with_mode(Mode::Bar, Some(Duration::from_secs(60)));
        b.update(Counts {
            fetched: 3,
            stored: 2,
            queued: 1,
            requests: 4,
        });
        b.finish(StopReason::Exhausted);
    }
}
