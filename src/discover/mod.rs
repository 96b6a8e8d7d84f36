//! Discovery: feeds and sitemaps, bytes in, listed URLs out. Pure.
//!
//! OWNER: discovery work (issue 4).
