//! Whole crawls on the simulated web.
