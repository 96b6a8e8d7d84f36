//! The crawl end to end: the real `scraper crawl` against the local web, its
//! outages, partitions, publisher consent, publishers who turn it away, and archives.

mod archive;
mod consent;
mod outage;
mod partition;
mod run;
mod turned;
