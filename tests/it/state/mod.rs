//! State on disk: the run lock, the seen set and the state files.

mod store;
