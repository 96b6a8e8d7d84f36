//! Helpers shared by the tests (and, through `#[path]`, by the benchmarks):
//! no test lives here.

pub mod daily_web;
pub mod fixture;
pub mod focus_web;
pub mod git;
pub mod many_hosts;
pub mod news_web;
pub mod policy;
pub mod rng;
pub mod sim;
pub mod sim_engine;
pub mod tool;
pub mod web;
