//! Dates read from strings, in one place. Pure.
//!
//! This file: machine-readable dates and times (feed and sitemap dates, meta
//! tags, JSON-LD, the `--min-lastmod` cut-off, state files); [`written`]:
//! dates written for people (`4. März 2024`, `March 4, 2024`). Where on a
//! page to look for its date is the extractor's business (`extract::date`).

pub mod written;

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// Parse a machine-readable date or time: RFC 3339 / ISO 8601 (W3C datetime,
/// with or without seconds, fraction or offset), RFC 2822, or a bare `YYYY-MM-DD`
/// (taken as midnight UTC). Returns the instant with its original offset.
pub fn parse_datetime(text: &str) -> Option<DateTime<FixedOffset>> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Some(d);
    }
    if t.len() == 10
        && let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d")
    {
        return FixedOffset::east_opt(0)?
            .from_local_datetime(&d.and_hms_opt(0, 0, 0)?)
            .single();
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(t) {
        return Some(d);
    }
    let utc = FixedOffset::east_opt(0)?;
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S %z",
    ] {
        if let Ok(d) = DateTime::parse_from_str(t, fmt) {
            return Some(d);
        }
    }
    let t = t.strip_suffix('Z').unwrap_or(t);
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, fmt) {
            return utc.from_local_datetime(&d).single();
        }
    }
    let day = t.get(..10).unwrap_or(t);
    if let Ok(d) = NaiveDate::parse_from_str(day, "%Y-%m-%d") {
        return utc.from_local_datetime(&d.and_hms_opt(0, 0, 0)?).single();
    }
    // W3C datetime also allows `YYYY-MM` and `YYYY`.
    if let Ok(d) = NaiveDate::parse_from_str(&format!("{t}-01"), "%Y-%m-%d") {
        return utc.from_local_datetime(&d.and_hms_opt(0, 0, 0)?).single();
    }
    None
}

/// `crawl.min_lastmod` / `--min-lastmod`: no cut-off, a fixed one, or
/// `auto` (per host, from the last runs; the crawl resolves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MinLastmod {
    /// Empty, `none` or absent: every entry is read.
    #[default]
    None,
    /// `auto`: from the last successful run (see `crawl::outage::Cutoff`).
    Auto,
    /// A date (UTC midnight) or an RFC 3339 time.
    Since(DateTime<Utc>),
}

impl MinLastmod {
    /// A date (UTC), an RFC 3339 time, `auto`, or empty / `none` for none.
    pub fn parse(text: &str) -> Result<MinLastmod, String> {
        let t = text.trim();
        if t.is_empty() || t == "none" {
            return Ok(MinLastmod::None);
        }
        if t == "auto" {
            return Ok(MinLastmod::Auto);
        }
        if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
            return Ok(MinLastmod::Since(Utc.from_utc_datetime(
                &d.and_hms_opt(0, 0, 0).expect("midnight exists"),
            )));
        }
        DateTime::parse_from_rfc3339(t)
            .map(|d| MinLastmod::Since(d.with_timezone(&Utc)))
            .map_err(|_| {
                format!(
                    "expected a date such as 2024-01-01, an RFC 3339 time, or `auto`; got `{t}`"
                )
            })
    }

    /// The fixed cut-off, if this is one.
    pub fn since(self) -> Option<DateTime<Utc>> {
        match self {
            MinLastmod::Since(d) => Some(d),
            MinLastmod::None | MinLastmod::Auto => None,
        }
    }
}

impl std::str::FromStr for MinLastmod {
    type Err = String;
    fn from_str(s: &str) -> Result<MinLastmod, String> {
        MinLastmod::parse(s)
    }
}

/// Written back as `config.yml` holds it: absent, `auto`, or an RFC 3339 time.
impl serde::Serialize for MinLastmod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MinLastmod::None => s.serialize_none(),
            MinLastmod::Auto => s.serialize_str("auto"),
            MinLastmod::Since(d) => s.serialize_str(&d.to_rfc3339()),
        }
    }
}

impl<'de> serde::Deserialize<'de> for MinLastmod {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MinLastmod, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => MinLastmod::parse(&text).map_err(serde::de::Error::custom),
            None => Ok(MinLastmod::None),
        }
    }
}

/// The fixed cut-off a `--min-lastmod` value names: `Some` for a date or a
/// time, `None` for none and for `auto` (which needs the last runs: see
/// [`MinLastmod`]). `_now` is not read.
pub fn parse_cutoff(text: &str, _now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, String> {
    MinLastmod::parse(text).map(MinLastmod::since)
}

/// Format an instant the way records and state files store it: `2026-10-09T18:12:33Z`.
/// `t` without its fraction of a second (records hold whole seconds).
pub fn whole_seconds(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::Timelike;
    t.with_nanosecond(0).unwrap_or(t)
}

pub fn format_utc(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_dates() {
        let table = [
            ("2024-03-04T10:00:00Z", "2024-03-04T10:00:00+00:00"),
            ("2024-03-04T23:30:00-05:00", "2024-03-04T23:30:00-05:00"),
            ("2024-03-04", "2024-03-04T00:00:00+00:00"),
            ("2024-03-04T10:00+01:00", "2024-03-04T10:00:00+01:00"),
            ("Mon, 04 Mar 2024 10:00:00 GMT", "2024-03-04T10:00:00+00:00"),
            ("2024-03-04 10:00:00", "2024-03-04T10:00:00+00:00"),
            ("2024-03", "2024-03-01T00:00:00+00:00"),
        ];
        for (input, want) in table {
            assert_eq!(parse_datetime(input).unwrap().to_rfc3339(), want, "{input}");
        }
        for bad in ["", "yesterday", "2024-13-45"] {
            assert!(parse_datetime(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn cutoffs() {
        let now = Utc::now();
        assert_eq!(
            parse_cutoff("2024-01-01", now)
                .unwrap()
                .unwrap()
                .to_rfc3339(),
            "2024-01-01T00:00:00+00:00"
        );
        assert!(
            parse_cutoff("2024-01-01T05:00:00+02:00", now)
                .unwrap()
                .is_some()
        );
        assert!(parse_cutoff("auto", now).unwrap().is_none());
        assert!(parse_cutoff("soon", now).is_err());
    }
}
