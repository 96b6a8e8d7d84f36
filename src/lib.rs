//! `scraper`: a focused, polite crawler that grows a dataset of AI and technology articles.
//!
//! Modules follow the data's path: [`config`] -> [`url`] -> [`net`] (fetch, robots,
//! politeness) -> [`extract`] / [`discover`] -> [`frontier`] -> [`crawl`] (the async
//! loop) -> [`store`] (seen-set, shards, state) -> [`dataset`] (Parquet) -> [`report`]
//! (stats, dashboard). See ARCHITECTURE.md.

pub mod config;
pub mod consent;
pub mod crawl;
pub mod dataset;
pub mod date;
pub mod discover;
pub mod extract;
pub mod frontier;
pub mod gated;
pub mod health;
pub mod inspect;
pub mod net;
pub mod partition;
pub mod phrases;
pub mod record;
pub mod reextract;
pub mod relevance;
pub mod render;
pub mod report;
pub mod source;
pub mod store;
pub mod url;
#[cfg(test)]
mod xorshift;
