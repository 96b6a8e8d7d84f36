//! Discovery: feeds, sitemaps and listings read through the public API, then
//! whole crawls that find what a news web publishes, run after run and day after day.

mod daily_week;
mod documents;
mod runs;
