//! What the crawl did and is doing: `scraper stats` ([`mod@stats`]), the last
//! run's summary ([`run`]), the live dashboard ([`mod@dashboard`], fed by
//! [`log`] and folded by [`live`]). Values only: the binary renders and
//! prints the reports (`src/cli/print/stats.rs`) and shows a running crawl's
//! progress (`src/cli/progress.rs`).
//!
//! Everything here only reads `data/`; nothing writes to it.

pub mod dashboard;
pub mod live;
pub mod log;
pub mod run;
pub mod stats;
