//! What the crawl did and is doing: `scraper stats` ([`mod@stats`], rendered by
//! [`text`]), the last run's summary ([`run`]), the live dashboard
//! ([`mod@dashboard`], fed by [`log`] and folded by [`live`]) and the crawl's
//! progress display ([`progress`]). The binary prints the reports
//! (`src/report_out.rs`).
//!
//! Everything here only reads `data/`; nothing writes to it.

pub mod dashboard;
pub mod live;
pub mod log;
pub mod progress;
pub mod run;
pub mod stats;
pub mod text;

pub use progress::Progress;
