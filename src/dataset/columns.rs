//! Arrow column builders for one batch of rows, in schema order.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Int32Builder, Int64Builder, LargeStringBuilder, ListBuilder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, SchemaRef};

use super::row::Parsed;
use super::schema::OPTIONAL;

/// Builders for every column; optional columns are built only when the schema has them.
pub struct Columns {
    id: Int64Builder,
    url: StringBuilder,
    domain: StringBuilder,
    title: StringBuilder,
    date: Date32Builder,
    date_source: StringBuilder,
    year: Int32Builder,
    text: LargeStringBuilder,
    keywords: ListBuilder<StringBuilder>,
    fetched_at: TimestampMicrosecondBuilder,
    /// `lang`, `canonical_url`, `byline`, `run_id`, `robots_hash`, `crawler`: `None` when not in the schema.
    optional: [Option<StringBuilder>; 6],
    /// `ai_signals` and `ai_reserved`, when in the schema.
    ai: Option<(ListBuilder<StringBuilder>, BooleanBuilder)>,
}

impl Columns {
    pub fn new(schema: &SchemaRef, rows: usize) -> Columns {
        let optional = OPTIONAL.map(|(name, _)| {
            schema
                .field_with_name(name)
                .is_ok()
                .then(|| StringBuilder::with_capacity(rows, rows * 8))
        });
        Columns {
            id: Int64Builder::with_capacity(rows),
            url: StringBuilder::with_capacity(rows, rows * 80),
            domain: StringBuilder::with_capacity(rows, rows * 16),
            title: StringBuilder::with_capacity(rows, rows * 80),
            date: Date32Builder::with_capacity(rows),
            date_source: StringBuilder::with_capacity(rows, rows * 8),
            year: Int32Builder::with_capacity(rows),
            text: LargeStringBuilder::with_capacity(rows, rows * 4096),
            keywords: ListBuilder::new(StringBuilder::new()),
            fetched_at: TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
            optional,
            ai: schema.field_with_name("ai_signals").is_ok().then(|| {
                (
                    ListBuilder::new(StringBuilder::new()),
                    BooleanBuilder::with_capacity(rows),
                )
            }),
        }
    }

    pub fn push(&mut self, p: &Parsed<'_>) {
        let r = &p.row;
        self.id.append_value(r.id);
        self.url.append_value(&r.url);
        self.domain.append_value(&r.domain);
        self.title.append_value(&r.title);
        self.date.append_option(p.date_days);
        self.date_source.append_option(r.date_source.as_deref());
        self.year.append_option(r.year);
        self.text.append_value(&r.text);
        for k in &r.keywords {
            self.keywords.values().append_value(k);
        }
        self.keywords.append(true);
        self.fetched_at.append_value(p.fetched_at_us);
        let values = [
            &r.lang,
            &r.canonical_url,
            &r.byline,
            &r.run_id,
            &r.robots_hash,
            &r.crawler,
        ];
        for (builder, value) in self.optional.iter_mut().zip(values) {
            if let Some(b) = builder {
                b.append_option(value.as_deref());
            }
        }
        if let Some((signals, reserved)) = &mut self.ai {
            // A record with consent provenance and no signals has an empty list; an older one, null.
            match (&r.ai_signals, r.ai_reserved) {
                (Some(list), _) => {
                    for s in list {
                        signals.values().append_value(s);
                    }
                    signals.append(true);
                }
                (None, Some(_)) => signals.append(true),
                (None, None) => signals.append(false),
            }
            reserved.append_option(r.ai_reserved);
        }
    }

    /// The rows pushed so far as a batch; the builders start again empty.
    pub fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(self.id.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.domain.finish()),
            Arc::new(self.title.finish()),
            Arc::new(self.date.finish()),
            Arc::new(self.date_source.finish()),
            Arc::new(self.year.finish()),
            Arc::new(self.text.finish()),
            Arc::new(self.keywords.finish()),
            Arc::new(self.fetched_at.finish()),
        ];
        for b in self.optional.iter_mut().flatten() {
            arrays.push(Arc::new(b.finish()));
        }
        if let Some((signals, reserved)) = &mut self.ai {
            arrays.push(Arc::new(signals.finish()));
            arrays.push(Arc::new(reserved.finish()));
        }
        RecordBatch::try_new(schema.clone(), arrays)
    }
}
