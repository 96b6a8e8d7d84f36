//! Arrow column builders for one batch of rows, in schema order (every
//! column of [`super::schema::schema`], always).

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int32Builder, Int64Builder, LargeStringBuilder,
    ListBuilder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, LargeStringArray, RecordBatch};
use arrow_schema::{ArrowError, SchemaRef};

use super::row::Parsed;

/// Builders for every column.
pub struct Columns {
    /// Rows a batch is sized for.
    rows: usize,
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
    /// `lang`, `canonical_url`, `byline`, `run_id`, `robots_hash`, `crawler`.
    optional: [StringBuilder; 6],
    ai_signals: ListBuilder<StringBuilder>,
    ai_reserved: BooleanBuilder,
    relevance_score: Float64Builder,
    markdown: LargeStringBuilder,
    date_modified: Date32Builder,
    accessible_for_free: BooleanBuilder,
    extractor_version: StringBuilder,
}

impl Columns {
    pub fn new(rows: usize) -> Columns {
        Columns::sized(rows, rows * 4096, rows * 4096)
    }

    /// Builders with room for `rows` rows, `text` bytes of text and `markdown` of Markdown.
    fn sized(rows: usize, text: usize, markdown: usize) -> Columns {
        Columns {
            rows,
            id: Int64Builder::with_capacity(rows),
            url: StringBuilder::with_capacity(rows, rows * 80),
            domain: StringBuilder::with_capacity(rows, rows * 16),
            title: StringBuilder::with_capacity(rows, rows * 80),
            date: Date32Builder::with_capacity(rows),
            date_source: StringBuilder::with_capacity(rows, rows * 8),
            year: Int32Builder::with_capacity(rows),
            text: LargeStringBuilder::with_capacity(rows, text),
            keywords: ListBuilder::new(StringBuilder::new()),
            fetched_at: TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
            optional: std::array::from_fn(|_| StringBuilder::with_capacity(rows, rows * 8)),
            ai_signals: ListBuilder::new(StringBuilder::new()),
            ai_reserved: BooleanBuilder::with_capacity(rows),
            relevance_score: Float64Builder::with_capacity(rows),
            markdown: LargeStringBuilder::with_capacity(rows, markdown),
            date_modified: Date32Builder::with_capacity(rows),
            accessible_for_free: BooleanBuilder::with_capacity(rows),
            extractor_version: StringBuilder::with_capacity(rows, rows * 12),
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
            builder.append_option(value.as_deref());
        }
        // A record with consent provenance and no signals has an empty list; an older one, null.
        match (&r.ai_signals, r.ai_reserved) {
            (Some(list), _) => {
                for s in list {
                    self.ai_signals.values().append_value(s);
                }
                self.ai_signals.append(true);
            }
            (None, Some(_)) => self.ai_signals.append(true),
            (None, None) => self.ai_signals.append(false),
        }
        self.ai_reserved.append_option(r.ai_reserved);
        self.relevance_score.append_option(r.relevance_score);
        self.markdown.append_option(r.markdown.as_deref());
        self.date_modified.append_option(p.modified_days);
        self.accessible_for_free
            .append_option(r.accessible_for_free);
        self.extractor_version
            .append_option(r.extractor_version.as_deref());
    }

    /// The rows pushed so far as a batch; the builders start again empty,
    /// with room for as much text and Markdown as this batch held and an
    /// eighth more (a builder left to grow from nothing copies its bytes
    /// several times over).
    pub fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
        let batch = self.arrays(schema)?;
        let used = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<LargeStringArray>())
                .map_or(0, |a| a.values().len())
        };
        let room = |n: usize| n + n / 8;
        *self = Columns::sized(self.rows, room(used("text")), room(used("markdown")));
        Ok(batch)
    }

    /// Every builder's rows as a batch.
    fn arrays(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
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
        for b in &mut self.optional {
            arrays.push(Arc::new(b.finish()));
        }
        arrays.push(Arc::new(self.ai_signals.finish()));
        arrays.push(Arc::new(self.ai_reserved.finish()));
        arrays.push(Arc::new(self.relevance_score.finish()));
        arrays.push(Arc::new(self.markdown.finish()));
        arrays.push(Arc::new(self.date_modified.finish()));
        arrays.push(Arc::new(self.accessible_for_free.finish()));
        arrays.push(Arc::new(self.extractor_version.finish()));
        RecordBatch::try_new(schema.clone(), arrays)
    }
}
