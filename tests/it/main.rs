//! The one integration-test binary (as ripgrep does): the suite links once.
//! Helpers live in `support/`; every other folder is one capability of the
//! crawler, and its tests assert what a user of that capability sees. Network
//! tests talk only to servers on 127.0.0.1.
//!
//! A test that needs a tool outside Rust (Python modules, node, Chromium, the
//! shared eval set, a tmpfs mount) fails when it is missing, unless its
//! `SCRAPER_SKIP_<TOOL>=1` variable says skip (`support/tool.rs`).

mod support;

mod automation;
mod build;
mod commands;
mod crawl;
mod discovery;
mod extraction;
mod fetch;
mod frontier;
mod relevance;
mod render;
mod robustness;
mod state;
