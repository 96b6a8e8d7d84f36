//! The dataset's columns, declared once ([`COLUMNS`]): each column's name,
//! Arrow type, nullability, meaning and how a shard line fills it. The Arrow
//! schema ([`super::schema::schema`]), the builders of a batch ([`Columns`])
//! and the card's field table all derive from that list, so adding a column
//! is one entry here plus the [`Row`](super::row::Row) field it reads; a test
//! in `schema.rs` fails when a field of [`crate::record::Article`] is neither a
//! column nor listed as left out on purpose.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int32Builder, Int64Builder, LargeStringBuilder,
    ListBuilder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{Array, ArrayRef, LargeStringArray, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, SchemaRef, TimeUnit};

use super::row::Parsed;

/// An Arrow type a column can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int64,
    Int32,
    Float64,
    Bool,
    /// `Utf8`: short strings.
    Str,
    /// `LargeUtf8`: the text and its Markdown (a batch can pass 2 GiB).
    LargeStr,
    /// `Date32`: days since the Unix epoch.
    Date,
    /// Microseconds since the Unix epoch, UTC.
    Timestamp,
    /// A list of strings.
    Strings,
}

impl Kind {
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Int64 => DataType::Int64,
            Kind::Int32 => DataType::Int32,
            Kind::Float64 => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Str => DataType::Utf8,
            Kind::LargeStr => DataType::LargeUtf8,
            Kind::Date => DataType::Date32,
            Kind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Strings => DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        }
    }
}

/// One row's value of one column, borrowed from the parsed line.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'r> {
    Int64(i64),
    Int32(Option<i32>),
    Float64(Option<f64>),
    Bool(Option<bool>),
    /// For [`Kind::Str`] and [`Kind::LargeStr`].
    Str(Option<&'r str>),
    /// Days since the Unix epoch.
    Date(Option<i32>),
    /// Microseconds since the Unix epoch.
    Timestamp(i64),
    /// `None` is a null list, `Some(empty)` an empty one.
    Strings(Option<Vec<&'r str>>),
}

/// One column of the dataset.
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    /// What it holds, for the card's field table.
    pub meaning: &'static str,
    /// Its value in a row.
    pub value: for<'r> fn(&'r Parsed<'_>) -> Value<'r>,
}

impl Column {
    pub fn field(&self) -> Field {
        Field::new(self.name, self.kind.data_type(), self.nullable)
    }
}

/// A consent-provenance list: a record with provenance and no signals has an
/// empty list; an older one, null.
fn signals<'r>(p: &'r Parsed<'_>) -> Value<'r> {
    Value::Strings(match (&p.row.ai_signals, p.row.ai_reserved) {
        (Some(list), _) => Some(list.iter().map(String::as_str).collect()),
        (None, Some(_)) => Some(Vec::new()),
        (None, None) => None,
    })
}

/// Every column, in schema order. The big texts, `markdown` and `text`, come
/// last: a row's small values then sit together in each row group, so an
/// edit changes one short run of bytes for them plus its text pages (see
/// `write.rs`). New columns go just before `markdown` (and nullable).
pub const COLUMNS: &[Column] = &[
    Column {
        name: "id",
        kind: Kind::Int64,
        nullable: false,
        meaning: "stable id given by the crawler; never reused or renumbered",
        value: |p| Value::Int64(p.row.id),
    },
    Column {
        name: "url",
        kind: Kind::Str,
        nullable: false,
        meaning: "normalised URL the page was fetched from",
        value: |p| Value::Str(Some(&p.row.url)),
    },
    Column {
        name: "domain",
        kind: Kind::Str,
        nullable: false,
        meaning: "host without `www.`",
        value: |p| Value::Str(Some(&p.row.domain)),
    },
    Column {
        name: "title",
        kind: Kind::Str,
        nullable: false,
        meaning: "headline",
        value: |p| Value::Str(Some(&p.row.title)),
    },
    Column {
        name: "date",
        kind: Kind::Date,
        nullable: true,
        meaning: "publication day as the publisher's calendar shows it",
        value: |p| Value::Date(p.date_days),
    },
    Column {
        name: "date_source",
        kind: Kind::Str,
        nullable: true,
        meaning: "where the date was found (metadata, JSON-LD, URL, ...)",
        value: |p| Value::Str(p.row.date_source.as_deref()),
    },
    Column {
        name: "year",
        kind: Kind::Int32,
        nullable: true,
        meaning: "publication year",
        value: |p| Value::Int32(p.row.year),
    },
    Column {
        name: "keywords",
        kind: Kind::Strings,
        nullable: false,
        meaning: "broad target terms found, most frequent first",
        value: |p| Value::Strings(Some(p.row.keywords.iter().map(|k| k.as_ref()).collect())),
    },
    Column {
        name: "fetched_at",
        kind: Kind::Timestamp,
        nullable: false,
        meaning: "when the page was fetched (UTC)",
        value: |p| Value::Timestamp(p.fetched_at_us),
    },
    Column {
        name: "lang",
        kind: Kind::Str,
        nullable: true,
        meaning: "ISO 639-1 language code",
        value: |p| Value::Str(p.row.lang.as_deref()),
    },
    Column {
        name: "canonical_url",
        kind: Kind::Str,
        nullable: true,
        meaning: "the page's `rel=canonical` when it differs from `url`",
        value: |p| Value::Str(p.row.canonical_url.as_deref()),
    },
    Column {
        name: "byline",
        kind: Kind::Str,
        nullable: true,
        meaning: "author line",
        value: |p| Value::Str(p.row.byline.as_deref()),
    },
    Column {
        name: "run_id",
        kind: Kind::Str,
        nullable: true,
        meaning: "the crawl run that stored the record",
        value: |p| Value::Str(p.row.run_id.as_deref()),
    },
    Column {
        name: "robots_hash",
        kind: Kind::Str,
        nullable: true,
        meaning: "xxh3 (hex) of the robots.txt the page was fetched under",
        value: |p| Value::Str(p.row.robots_hash.as_deref()),
    },
    Column {
        name: "crawler",
        kind: Kind::Str,
        nullable: true,
        meaning: "the crawler version that stored the record",
        value: |p| Value::Str(p.row.crawler.as_deref()),
    },
    Column {
        name: "ai_signals",
        kind: Kind::Strings,
        nullable: true,
        meaning: "AI-use signals the publisher gave (robots.txt groups and Content-Signal, IETF \
                  aipref Content-Usage, TDMRep, RSL licences, noai meta and headers)",
        value: signals,
    },
    Column {
        name: "ai_reserved",
        kind: Kind::Bool,
        nullable: true,
        meaning: "whether those signals reserve AI training (kept under `ai_use_policy: record`)",
        value: |p| Value::Bool(p.row.ai_reserved),
    },
    Column {
        name: "relevance_score",
        kind: Kind::Float64,
        nullable: true,
        meaning: "the relevance rule's score in [0, 1] when the crawl recorded it",
        value: |p| Value::Float64(p.row.relevance_score),
    },
    Column {
        name: "date_modified",
        kind: Kind::Date,
        nullable: true,
        meaning: "the day the page says it was last modified; the row is the latest version \
                  of its URL",
        value: |p| Value::Date(p.modified_days),
    },
    Column {
        name: "accessible_for_free",
        kind: Kind::Bool,
        nullable: true,
        meaning: "whether the article is free to read (JSON-LD `isAccessibleForFree`, \
                  paywall markup); null when the page said nothing",
        value: |p| Value::Bool(p.row.accessible_for_free),
    },
    Column {
        name: "extractor_version",
        kind: Kind::Str,
        nullable: true,
        meaning: "the extractor that made the row from the page: its code version and a \
                  hash of the keyword rule",
        value: |p| Value::Str(p.row.extractor_version.as_deref()),
    },
    Column {
        name: "markdown",
        kind: Kind::LargeStr,
        nullable: true,
        meaning: "the text with its structure as Markdown: headings, lists, quotes, code, \
                  tables, emphasis; links as text (records since the field was added)",
        value: |p| Value::Str(p.row.markdown.as_deref()),
    },
    Column {
        name: "text",
        kind: Kind::LargeStr,
        nullable: false,
        meaning: "article text, paragraphs separated by `\\n` (the plain reading of `markdown`)",
        value: |p| Value::Str(Some(&p.row.text)),
    },
];

/// The meaning of the column `name` (empty for an unknown name).
pub fn meaning(name: &str) -> &'static str {
    COLUMNS
        .iter()
        .find(|c| c.name == name)
        .map_or("", |c| c.meaning)
}

/// The builder of one column.
enum Builder {
    Int64(Int64Builder),
    Int32(Int32Builder),
    Float64(Float64Builder),
    Bool(BooleanBuilder),
    Str(StringBuilder),
    LargeStr(LargeStringBuilder),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    Strings(ListBuilder<StringBuilder>),
}

impl Builder {
    /// A builder for `rows` rows and `bytes` bytes of string values.
    fn new(kind: Kind, rows: usize, bytes: usize) -> Builder {
        match kind {
            Kind::Int64 => Builder::Int64(Int64Builder::with_capacity(rows)),
            Kind::Int32 => Builder::Int32(Int32Builder::with_capacity(rows)),
            Kind::Float64 => Builder::Float64(Float64Builder::with_capacity(rows)),
            Kind::Bool => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            Kind::Str => Builder::Str(StringBuilder::with_capacity(rows, bytes)),
            Kind::LargeStr => Builder::LargeStr(LargeStringBuilder::with_capacity(rows, bytes)),
            Kind::Date => Builder::Date(Date32Builder::with_capacity(rows)),
            Kind::Timestamp => Builder::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
            ),
            Kind::Strings => Builder::Strings(ListBuilder::new(StringBuilder::new())),
        }
    }

    /// Append one value; a value of another kind is an error (a wrong entry in [`COLUMNS`]).
    fn append(&mut self, v: Value<'_>) -> Result<(), ArrowError> {
        match (self, v) {
            (Builder::Int64(b), Value::Int64(x)) => b.append_value(x),
            (Builder::Int32(b), Value::Int32(x)) => b.append_option(x),
            (Builder::Float64(b), Value::Float64(x)) => b.append_option(x),
            (Builder::Bool(b), Value::Bool(x)) => b.append_option(x),
            (Builder::Str(b), Value::Str(x)) => b.append_option(x),
            (Builder::LargeStr(b), Value::Str(x)) => b.append_option(x),
            (Builder::Date(b), Value::Date(x)) => b.append_option(x),
            (Builder::Timestamp(b), Value::Timestamp(x)) => b.append_value(x),
            (Builder::Strings(b), Value::Strings(x)) => match x {
                Some(items) => {
                    for s in items {
                        b.values().append_value(s);
                    }
                    b.append(true);
                }
                None => b.append(false),
            },
            (_, v) => {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "a column's value of the wrong kind: {v:?}"
                )));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::LargeStr(b) => Arc::new(b.finish()),
            Builder::Date(b) => Arc::new(b.finish()),
            Builder::Timestamp(b) => Arc::new(b.finish()),
            Builder::Strings(b) => Arc::new(b.finish()),
        }
    }
}

/// String bytes a column's first batch is sized for, per row.
fn first_room(kind: Kind) -> usize {
    match kind {
        Kind::LargeStr => 4096,
        Kind::Str => 64,
        _ => 0,
    }
}

/// String bytes an array held (0 for other arrays).
fn string_bytes(a: &ArrayRef) -> usize {
    if let Some(s) = a.as_any().downcast_ref::<LargeStringArray>() {
        s.values().len()
    } else if let Some(s) = a.as_any().downcast_ref::<StringArray>() {
        s.values().len()
    } else {
        0
    }
}

/// Builders for every column of [`COLUMNS`], for one batch at a time.
pub struct Columns {
    /// Rows a batch is sized for.
    rows: usize,
    builders: Vec<Builder>,
    /// Whether a row failed to append: the batch is then refused.
    broken: Option<ArrowError>,
}

impl Columns {
    pub fn new(rows: usize) -> Columns {
        let builders = COLUMNS
            .iter()
            .map(|c| Builder::new(c.kind, rows, rows * first_room(c.kind)))
            .collect();
        Columns {
            rows,
            builders,
            broken: None,
        }
    }

    pub fn push(&mut self, p: &Parsed<'_>) {
        for (c, b) in COLUMNS.iter().zip(&mut self.builders) {
            if let Err(e) = b.append((c.value)(p))
                && self.broken.is_none()
            {
                self.broken = Some(e);
            }
        }
    }

    /// The rows pushed so far as a batch; the builders start again empty,
    /// with room for as many string bytes as this batch held and an eighth
    /// more (a builder left to grow from nothing copies its bytes several
    /// times over).
    pub fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
        if let Some(e) = self.broken.take() {
            return Err(e);
        }
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let room = |n: usize| n + n / 8;
        for ((b, c), a) in self.builders.iter_mut().zip(COLUMNS).zip(&arrays) {
            if matches!(c.kind, Kind::Str | Kind::LargeStr) {
                *b = Builder::new(c.kind, self.rows, room(string_bytes(a)));
            }
        }
        RecordBatch::try_new(schema.clone(), arrays)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::row::Row;

    #[test]
    fn every_column_takes_the_value_its_entry_gives() {
        let line = br#"{"id":7,"url":"https://a.example/x","domain":"a.example","title":"T","date":"2024-03-05","year":2024,"text":"Body","keywords":["ai"],"fetched_at":"2026-10-09T18:12:33Z","ai_reserved":false,"markdown":"Body","date_modified":"2024-03-06"}"#;
        let p = Row::parse(line).unwrap();
        let mut cols = Columns::new(4);
        cols.push(&p);
        cols.push(&p);
        let batch = cols.finish(&super::super::schema::schema()).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.num_columns(), COLUMNS.len());
        let signals = batch.column_by_name("ai_signals").unwrap();
        assert!(
            signals.is_valid(0),
            "provenance without signals is an empty list"
        );
        assert!(batch.column_by_name("lang").unwrap().is_null(0));
        // The builders start again and take the next batch.
        cols.push(&p);
        assert_eq!(
            cols.finish(&super::super::schema::schema())
                .unwrap()
                .num_rows(),
            1
        );
    }

    #[test]
    fn a_value_of_the_wrong_kind_refuses_the_batch() {
        let mut b = Builder::new(Kind::Int64, 1, 0);
        assert!(b.append(Value::Str(Some("x"))).is_err());
        assert!(b.append(Value::Int64(1)).is_ok());
    }
}
