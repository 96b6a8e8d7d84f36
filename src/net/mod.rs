//! The only module that touches the network: HTTP fetching with caps and
//! manual redirects (`fetch`), robots.txt (`robots`) and per-host politeness (`polite`).
//!
//! OWNER: net work (part of issue 2).
