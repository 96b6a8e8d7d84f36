//! Integration tests: frontier.
