//! Frontier: the scheduler's contract, case by case, whole crawls of the
//! simulated web in virtual time (`support/sim.rs`), and a focused crawl of a
//! local web by the real binary.

mod basics;
mod focus;
mod invariants;
mod open;
mod polite_web;
mod scale;
mod simulated;
