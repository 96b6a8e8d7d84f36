//! What the crawl did and is doing: `scraper stats` ([`mod@stats`], rendered by
//! [`text`]), the last run's summary ([`run`]), the live dashboard
//! ([`mod@dashboard`], fed by [`log`] and folded by [`live`]). The binary
//! prints the reports (`src/report_out.rs`) and shows a running crawl's
//! progress (`src/progress.rs`).
//!
//! Everything here only reads `data/`; nothing writes to it.

pub mod dashboard;
pub mod live;
pub mod log;
pub mod run;
pub mod stats;
pub mod text;
