//! Integration tests: crawl.
