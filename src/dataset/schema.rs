//! The explicit Arrow schema of the dataset, the fixed Parquet writer options,
//! and the Hugging Face feature names the card derives from the schema.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use super::row::{
    HAS_AI, HAS_BYLINE, HAS_CANONICAL, HAS_CRAWLER, HAS_LANG, HAS_ROBOTS_HASH, HAS_RUN_ID,
};

/// Optional string columns, in schema order, with the bit that says a record fills them.
pub const OPTIONAL: [(&str, u8); 6] = [
    ("lang", HAS_LANG),
    ("canonical_url", HAS_CANONICAL),
    ("byline", HAS_BYLINE),
    ("run_id", HAS_RUN_ID),
    ("robots_hash", HAS_ROBOTS_HASH),
    ("crawler", HAS_CRAWLER),
];

/// Columns with few distinct values: dictionary encoded.
const DICTIONARY: &[&str] = &[
    "domain",
    "date_source",
    "lang",
    "run_id",
    "robots_hash",
    "crawler",
    "keywords.list.item",
    "ai_signals.list.item",
];

/// The schema: the ten fixed columns, then each optional column that at least
/// one surviving record fills (`present` holds `row::HAS_*` bits).
pub fn schema(present: u8) -> SchemaRef {
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("domain", DataType::Utf8, false),
        Field::new("title", DataType::Utf8, false),
        Field::new("date", DataType::Date32, true),
        Field::new("date_source", DataType::Utf8, true),
        Field::new("year", DataType::Int32, true),
        Field::new("text", DataType::LargeUtf8, false),
        Field::new(
            "keywords",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
        Field::new(
            "fetched_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
    ];
    for (name, bit) in OPTIONAL {
        if present & bit != 0 {
            fields.push(Field::new(name, DataType::Utf8, true));
        }
    }
    // Consent provenance: the signals seen and whether they reserve AI training.
    if present & HAS_AI != 0 {
        fields.push(Field::new(
            "ai_signals",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        ));
        fields.push(Field::new("ai_reserved", DataType::Boolean, true));
    }
    Arc::new(Schema::new(fields))
}

/// Fixed writer options: zstd at `level`, dictionaries only where values
/// repeat, page-level statistics (hence a column index) except on `text`,
/// rows declared sorted by `id`. Row groups are cut by the caller.
pub fn writer_properties(level: i32) -> parquet::errors::Result<WriterProperties> {
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(level)?))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(Some(64))
        .set_column_index_truncate_length(Some(64))
        .set_max_row_group_row_count(None)
        .set_max_row_group_bytes(None)
        .set_sorting_columns(Some(vec![SortingColumn {
            column_idx: 0,
            descending: false,
            nulls_first: false,
        }]))
        .set_column_statistics_enabled(ColumnPath::from("text"), EnabledStatistics::Chunk);
    for col in DICTIONARY {
        let path = ColumnPath::new(col.split('.').map(str::to_string).collect());
        b = b.set_column_dictionary_enabled(path, true);
    }
    Ok(b.build())
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
    fn optional_columns_follow_presence() {
        assert_eq!(schema(0).fields().len(), 10);
        let s = schema(HAS_LANG | HAS_RUN_ID);
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(&names[10..], &["lang", "run_id"]);
    }

    #[test]
    fn features_from_schema() {
        let s = schema(0);
        let kw = s.field_with_name("keywords").unwrap();
        assert_eq!(feature_yaml(kw), "- name: keywords\n  sequence: string");
        let at = s.field_with_name("fetched_at").unwrap();
        assert_eq!(dtype(at.data_type()), "timestamp[us, tz=UTC]");
        assert_eq!(dtype(kw.data_type()), "list<string>");
        assert!(writer_properties(3).is_ok());
    }
}
