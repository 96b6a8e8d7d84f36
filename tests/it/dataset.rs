//! Integration tests: dataset.
