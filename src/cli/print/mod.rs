//! Everything the binary prints for people, one file per command (or group
//! of commands); each takes the value the library returned.

pub mod build;
pub mod check_url;
pub mod crawl;
pub mod health;
pub mod page;
pub mod probe;
pub mod state;
pub mod stats;
