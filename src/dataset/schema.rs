//! The explicit Arrow schema of the dataset, the fixed Parquet writer options,
//! and the Hugging Face feature names the card derives from the schema.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

/// Columns with few distinct values: dictionary encoded.
const DICTIONARY: &[&str] = &[
    "domain",
    "date_source",
    "lang",
    "run_id",
    "robots_hash",
    "crawler",
    "extractor_version",
    "keywords.list.item",
    "ai_signals.list.item",
];

/// The schema, the same for every build, derived from [`super::columns::COLUMNS`]:
/// every column is always present, nullable where a record may lack it
/// (older records lack the later fields).
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(
        super::columns::COLUMNS
            .iter()
            .map(super::columns::Column::field)
            .collect::<Vec<Field>>(),
    ))
}

/// Columns whose data pages the writer cuts itself, one page per piece of a
/// row group (`write.rs`): the big texts. Every other column is one page per
/// row group.
pub const PAGED: &[&str] = &["text", "markdown"];

/// Fixed writer options: zstd at `level`, dictionaries only where values
/// repeat, page-level statistics (hence a column index) except on `text` and
/// `markdown`, rows declared sorted by `id`, and the Arrow schema in the
/// footer (as `ArrowWriter` writes it). Pages: a [`PAGED`] column's writer
/// ends a page after every write, and `write.rs` writes it one piece (a run
/// of rows cut by id hash) at a time; other columns never end a page by size
/// or count, so each is one page per row group, and row groups are cut by the
/// caller. Every page boundary is then fixed by the ids of the rows around it.
pub fn writer_properties(
    level: i32,
    schema: &arrow_schema::Schema,
) -> parquet::errors::Result<WriterProperties> {
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(level)?))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(Some(64))
        .set_column_index_truncate_length(Some(64))
        .set_max_row_group_row_count(None)
        .set_max_row_group_bytes(None)
        // Pages end where the caller says, not at a running size.
        .set_data_page_size_limit(1 << 30)
        .set_data_page_row_count_limit(1 << 30)
        // One write of a piece is one mini-batch, so one page.
        .set_write_batch_size(1 << 20)
        .set_sorting_columns(Some(vec![SortingColumn {
            column_idx: 0,
            descending: false,
            nulls_first: false,
        }]));
    for col in PAGED {
        b = b
            .set_column_statistics_enabled(ColumnPath::from(*col), EnabledStatistics::Chunk)
            .set_column_data_page_row_count_limit(ColumnPath::from(*col), 1);
    }
    for col in DICTIONARY {
        let path = ColumnPath::new(col.split('.').map(str::to_string).collect());
        b = b.set_column_dictionary_enabled(path, true);
    }
    let mut props = b.build();
    parquet::arrow::add_encoded_arrow_schema_to_metadata(schema, &mut props);
    Ok(props)
}

/// The `dataset_info.features` entry for one field, as YAML lines (indented by the caller).
pub fn feature_yaml(field: &Field) -> String {
    match field.data_type() {
        DataType::List(item) => format!(
            "- name: {}\n  sequence: {}",
            field.name(),
            dtype(item.data_type())
        ),
        other => format!("- name: {}\n  dtype: {}", field.name(), dtype(other)),
    }
}

/// The Hugging Face `Value` dtype of an Arrow type.
pub fn dtype(t: &DataType) -> String {
    match t {
        DataType::Int64 => "int64".into(),
        DataType::Int32 => "int32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Boolean => "bool".into(),
        DataType::Utf8 => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Date32 => "date32".into(),
        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) => format!("timestamp[us, tz={tz}]"),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp[us]".into(),
        DataType::List(item) => format!("list<{}>", dtype(item.data_type())),
        other => other.to_string().to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_always_present() {
        let s = schema();
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names.len(), 23);
        assert_eq!(&names[..3], &["id", "url", "domain"]);
        assert_eq!(
            &names[17..],
            &[
                "relevance_score",
                "date_modified",
                "accessible_for_free",
                "extractor_version",
                "markdown",
                "text"
            ]
        );
        for f in s.fields().iter().skip(9) {
            assert_eq!(f.is_nullable(), f.name() != "text", "{}", f.name());
        }
        assert_eq!(
            dtype(s.field_with_name("relevance_score").unwrap().data_type()),
            "float64"
        );
    }

    #[test]
    fn features_from_schema() {
        let s = schema();
        let kw = s.field_with_name("keywords").unwrap();
        assert_eq!(feature_yaml(kw), "- name: keywords\n  sequence: string");
        let at = s.field_with_name("fetched_at").unwrap();
        assert_eq!(dtype(at.data_type()), "timestamp[us, tz=UTC]");
        assert_eq!(dtype(kw.data_type()), "list<string>");
        assert!(writer_properties(3, &s).is_ok());
    }

    /// Fields of `record::Article` that are deliberately not columns, and why.
    const LEFT_OUT: &[(&str, &str)] = &[
        (
            "updated",
            "the build keeps only the latest version of a URL",
        ),
        (
            "rendered",
            "how the crawler read the page (a browser); the text is what counts, and the schema stays fixed",
        ),
        ("warc_file", "archive location on the crawler's disk"),
        ("warc_offset", "archive location on the crawler's disk"),
        (
            "withdrawn",
            "withdrawn records are removed, never published",
        ),
    ];

    /// Every field of `Article` (read from its source) is a column or is
    /// listed in [`LEFT_OUT`]: a new field cannot be silently dropped.
    #[test]
    fn every_article_field_is_a_column_or_left_out_on_purpose() {
        let src = include_str!("../record/mod.rs");
        let start = src
            .find("pub struct Article {")
            .expect("Article in record/mod.rs");
        let body = &src[start..start + src[start..].find("\n}").expect("end of Article")];
        let fields: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub "))
            .filter_map(|l| l.split(':').next())
            .filter(|n| !n.contains(' '))
            .collect();
        assert!(fields.len() > 20, "{fields:?}");
        let s = schema();
        for f in &fields {
            let column = s.field_with_name(f).is_ok();
            let left_out = LEFT_OUT.iter().any(|(n, _)| n == f);
            assert!(
                column != left_out,
                "Article.{f}: a column: {column}, listed as left out: {left_out}"
            );
        }
        for (n, _) in LEFT_OUT {
            assert!(fields.contains(n), "{n} is no longer a field of Article");
        }
    }
}
