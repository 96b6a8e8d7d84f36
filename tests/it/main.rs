//! The one integration-test binary (as ripgrep does): every area is a submodule,
//! so the suite links once. Network tests talk only to servers on 127.0.0.1.

mod check_url;
mod consent;
mod crash;
mod crawl;
mod daily;
mod daily_web;
mod daily_week;
mod dashboard;
mod dataset;
mod discover;
mod discovery;
mod extract;
mod faults;
mod fixture;
mod frontier;
mod frontier_web;
mod fuzz;
mod hard_pages;
mod health;
mod markdown;
mod net;
mod outage;
mod partition;
mod partition_daily;
mod paywall;
mod relevance;
mod relevance_ml;
mod store;
mod turned;
mod warc;
mod web;
mod web_bot_auth;
