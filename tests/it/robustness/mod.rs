//! Robustness: a hostile web (one fault per host), crashes and a full disk,
//! and property tests that feed random input to every parser.

mod crash;
mod faults;
mod fuzz;
