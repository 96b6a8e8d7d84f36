//! The commands that look without crawling: `check-url`, `health` and
//! `probe`, `stats` and the dashboard (its server and its page in a browser).

mod check_url;
mod dashboard;
mod health;
mod stats;
