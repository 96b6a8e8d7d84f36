//! A simulated web, driven in virtual time (filled in below).
