//! Integration tests: discover.
