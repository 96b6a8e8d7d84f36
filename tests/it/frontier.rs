//! Integration tests: frontier. The scheduler's contract, case by case, and a
//! simulated web (`sim`) that runs whole crawls in virtual time.

mod basics;
mod engine;
mod focus;
mod invariants;
mod open;
mod policy;
mod scale;
mod sim;
mod simulated;
