//! Durations as `config.yml` writes them (`90s`, `40m`, `1h30m`, `250ms`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// A duration written as `90s`, `40m`, `1h30m`, `250ms` or a bare number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Span(pub Duration);

impl Span {
    pub fn secs(s: u64) -> Span {
        Span(Duration::from_secs(s))
    }
    pub fn millis(ms: u64) -> Span {
        Span(Duration::from_millis(ms))
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if !ms.is_multiple_of(1000) {
            write!(f, "{ms}ms")
        } else {
            write!(f, "{}s", ms / 1000)
        }
    }
}

impl std::str::FromStr for Span {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(Span)
    }
}

impl Serialize for Span {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Float(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(Span(Duration::from_secs(n))),
            Raw::Float(f) if f >= 0.0 && f.is_finite() => Ok(Span(Duration::from_secs_f64(f))),
            Raw::Float(f) => Err(serde::de::Error::custom(format!(
                "expected a non-negative duration, got {f}"
            ))),
            Raw::Text(t) => parse_duration(&t)
                .map(Span)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Parse `90s`, `40m`, `1h30m`, `250ms`, `2d`, or a bare (possibly fractional) number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "expected a duration such as `90s`, `40m`, `1h30m`, `250ms` or seconds, got `{text}`"
        )
    };
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = t.parse::<f64>() {
        return if secs >= 0.0 && secs.is_finite() {
            Ok(Duration::from_secs_f64(secs))
        } else {
            Err(bad())
        };
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let secs = match unit {
            "ms" => n / 1000.0,
            "s" | "sec" | "secs" => n,
            "m" | "min" | "mins" => n * 60.0,
            "h" | "hr" | "hrs" => n * 3600.0,
            "d" | "day" | "days" => n * 86400.0,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(secs);
    }
    Ok(total)
}
