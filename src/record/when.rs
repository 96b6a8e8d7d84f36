//! How the record's dates are written: a day as `YYYY-MM-DD`, an instant as
//! `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds). Reading is lenient where
//! older lines may differ: an instant in any RFC 3339 form, and a day that
//! is not a calendar day (a line written by hand or by an older version)
//! reads as absent rather than losing the whole record.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// `Option<NaiveDate>` as `"YYYY-MM-DD"` or `null`.
pub mod day {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(d: &Option<NaiveDate>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.collect_str(&d.format("%Y-%m-%d")),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<NaiveDate>, D::Error> {
        let text: Option<std::borrow::Cow<'de, str>> = Option::deserialize(d)?;
        Ok(text.and_then(|t| parse_day(&t)))
    }
}

/// `DateTime<Utc>` as `"YYYY-MM-DDTHH:MM:SSZ"`.
pub mod instant {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&crate::date::format_utc(*t))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        parse_instant(&text)
            .ok_or_else(|| serde::de::Error::custom(format_args!("not an RFC 3339 time: {text:?}")))
    }
}

/// A `YYYY-MM-DD` day (a longer string is read by its first ten characters).
pub(crate) fn parse_day(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.get(..10)?, "%Y-%m-%d").ok()
}

/// An RFC 3339 instant, taken to UTC.
pub(crate) fn parse_instant(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct T {
        #[serde(with = "day", default)]
        d: Option<NaiveDate>,
        #[serde(with = "instant")]
        t: DateTime<Utc>,
    }

    #[test]
    fn dates_round_trip_in_the_written_forms() {
        let line = r#"{"d":"2024-03-05","t":"2026-10-09T18:12:33Z"}"#;
        let v: T = serde_json::from_str(line).unwrap();
        assert_eq!(v.d, NaiveDate::from_ymd_opt(2024, 3, 5));
        assert_eq!(serde_json::to_string(&v).unwrap(), line);
        let none: T = serde_json::from_str(r#"{"d":null,"t":"2026-10-09T18:12:33Z"}"#).unwrap();
        assert_eq!(none.d, None);
        assert!(
            serde_json::to_string(&none)
                .unwrap()
                .contains(r#""d":null"#)
        );
    }

    #[test]
    fn older_forms_read_and_a_bad_day_reads_as_absent() {
        let v: T = serde_json::from_str(r#"{"d":"2024-13-45","t":"2026-10-09T20:12:33.5+02:00"}"#)
            .unwrap();
        assert_eq!(v.d, None);
        assert_eq!(crate::date::format_utc(v.t), "2026-10-09T18:12:33Z");
        assert!(serde_json::from_str::<T>(r#"{"d":null,"t":"yesterday"}"#).is_err());
    }
}
