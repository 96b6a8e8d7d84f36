//! Pass 2: the survivors, already in id order, are cut into files, row
//! groups and pieces at rows chosen by a hash of their id ([`cut`]), so a cut
//! does not move when rows before it are added or removed: an edit changes the
//! file, row group and piece it falls in, never the cuts after it. Each file
//! is one task for a pool of worker threads: a worker fetches each line from
//! its frame (its own small cache holds the current frame of each shard),
//! parses it, fills one Arrow batch per row group and writes it column by
//! column. The big texts ([`super::schema::PAGED`], last in the schema) are
//! written one page per piece (~4 rows); every other column is one page per
//! row group (~256 rows), and together those pages are a few tens of KB. So
//! removing a row changes one run of small pages and one text page (and the
//! offsets in the footer after them), which is what a chunk-deduplicating store
//! (the Hub's, ~64 KiB chunks) needs for a small upload; `benches/cdc_delta.sh`
//! measures it. (`parquet`'s own content-defined pages were tried first: its
//! chunker counts eight hash matches per boundary and keeps the count across
//! an edit, so the pages after an edit move for 1-1.5 MB, and it could write
//! an empty first page that `pyarrow` reads as an empty column,
//! [`has_empty_page`].) Each file is written to `<name>.tmp` and synced.
//!
//! Every cut depends on the data only, so the same shards give the same bytes,
//! whatever the number of threads.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::column::writer::ColumnWriterImpl;
use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::errors::ParquetError;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::SchemaDescPtr;

use super::BuildError;
use super::columns::Columns;
use super::row::Row;
use super::runs::Table;
use super::scan::{FrameRef, Meta};
use crate::store::shard::frames::{Decoder, line_ranges, read_at};

/// How a file is cut: expected rows per row group and per piece of a row
/// group (a cut falls before a row whose id hashes to a multiple of it), at
/// most [`MAX_FACTOR`] times that many.
#[derive(Debug, Clone)]
pub struct Cuts {
    pub row_group_rows: u64,
    pub page_rows: u64,
    /// Shards whose current frame stays decoded at once, per worker.
    pub frame_cache: usize,
}

/// A piece is cut after this many times its expected rows even without a
/// hashed boundary (which depends only on the rows since the last one).
pub const MAX_FACTOR: u64 = 4;

/// What one file holds.
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    pub rows: u64,
    pub row_groups: u64,
    /// Bytes of Arrow data written, used bytes rather than buffer capacity
    /// (the `num_bytes` and `dataset_size` the card reports).
    pub arrow_bytes: u64,
    pub file_bytes: u64,
    pub years: BTreeMap<Option<i32>, u64>,
    pub domains: HashMap<String, u64>,
    /// Rows per `lang` (`None`: no language recorded).
    pub langs: HashMap<Option<String>, u64>,
    /// Rows per `extractor_version` (`None`: records from before it was recorded).
    pub versions: BTreeMap<Option<String>, u64>,
}

/// The hash that places cuts: a fixed function of the id.
fn id_hash(id: i64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(&id.to_le_bytes(), 0x5ca1_ab1e)
}

/// Consecutive ranges of `rows` (in id order): a range ends before a row whose
/// id hash is a multiple of `every`, or after `MAX_FACTOR * every` rows.
/// Removing or adding a row moves no cut but its own (a boundary row that goes
/// merges two ranges); so a range's rows depend only on the rows inside it.
pub fn cut(rows: &[Meta], every: u64) -> Vec<Range<usize>> {
    let mut cutter = Cutter::new(every);
    let mut out: Vec<Range<usize>> = Vec::new();
    for m in rows {
        if let Some(r) = cutter.next(m.id) {
            out.push(r.start as usize..r.end as usize);
        }
    }
    let last = cutter.finish();
    out.push(last.start as usize..last.end as usize);
    out
}

/// [`cut`] a row at a time, for rows streamed from disk.
pub struct Cutter {
    every: u64,
    max: u64,
    start: u64,
    at: u64,
}

impl Cutter {
    pub fn new(every: u64) -> Cutter {
        let every = every.max(1);
        Cutter {
            every,
            max: every.saturating_mul(MAX_FACTOR),
            start: 0,
            at: 0,
        }
    }

    /// The next row's id: the range it closes, if it starts a new one.
    pub fn next(&mut self, id: i64) -> Option<Range<u64>> {
        let i = self.at;
        self.at += 1;
        if i > self.start && (id_hash(id).is_multiple_of(self.every) || i - self.start >= self.max)
        {
            let r = self.start..i;
            self.start = i;
            return Some(r);
        }
        None
    }

    /// The last range (empty when there were no rows).
    pub fn finish(self) -> Range<u64> {
        self.start..self.at
    }
}

/// The rows of one file: a slice in memory (tests) or a range of the
/// survivors' table on disk, loaded when a worker takes the file.
pub trait FileRows: Sync {
    /// How many rows.
    fn count(&self) -> usize;
    /// The rows, loaded into `buf` if they are not in memory.
    fn load<'b>(&'b self, buf: &'b mut Vec<Meta>) -> std::io::Result<&'b [Meta]>;
}

impl FileRows for &[Meta] {
    fn count(&self) -> usize {
        self.len()
    }
    fn load<'b>(&'b self, _: &'b mut Vec<Meta>) -> std::io::Result<&'b [Meta]> {
        Ok(self)
    }
}

/// Rows `range` of a table on disk.
pub struct TableRange<'a> {
    pub table: &'a Table<Meta>,
    pub range: Range<u64>,
}

impl FileRows for TableRange<'_> {
    fn count(&self) -> usize {
        usize::try_from(self.range.end - self.range.start).unwrap_or(usize::MAX)
    }
    fn load<'b>(&'b self, buf: &'b mut Vec<Meta>) -> std::io::Result<&'b [Meta]> {
        self.table.load(self.range.clone(), buf)?;
        Ok(buf)
    }
}

/// A file's name from its first id: stable while that row stays, sorting in
/// id order (the id's sign bit flipped, 16 hex digits).
pub fn file_name(first_id: Option<i64>) -> String {
    let key = first_id.map_or(0, |id| (id as u64) ^ (1 << 63));
    format!("train-{key:016x}.parquet")
}

/// Everything a file writer reads.
pub struct Input<'a> {
    pub shards: &'a [PathBuf],
    pub frames: &'a [FrameRef],
    pub schema: SchemaRef,
    /// The fields of `schema` before the [`PAGED`](super::schema::PAGED)
    /// ones (which come last): the columns written through Arrow column
    /// writers. Only these get one (each makes a zstd context pair).
    pub head: SchemaRef,
    /// The Parquet form of `schema`.
    pub parquet: SchemaDescPtr,
    pub props: WriterPropertiesPtr,
    pub cuts: Cuts,
}

impl<'a> Input<'a> {
    /// The input for `schema` written with `props` (see
    /// [`super::schema::writer_properties`]).
    pub fn new(
        shards: &'a [PathBuf],
        frames: &'a [FrameRef],
        schema: SchemaRef,
        props: WriterProperties,
        cuts: Cuts,
    ) -> parquet::errors::Result<Input<'a>> {
        let parquet = ArrowSchemaConverter::new()
            .with_coerce_types(props.coerce_types())
            .convert(&schema)?;
        let paged = |f: &Arc<arrow_schema::Field>| is_paged(f);
        let k = schema
            .fields()
            .iter()
            .position(paged)
            .unwrap_or(schema.fields().len());
        if !schema.fields()[k..].iter().all(paged) {
            return Err(ParquetError::General(
                "the paged columns must come last in the schema".into(),
            ));
        }
        let head = Arc::new(arrow_schema::Schema::new(schema.fields()[..k].to_vec()));
        Ok(Input {
            shards,
            frames,
            schema,
            head,
            parquet: Arc::new(parquet),
            props: Arc::new(props),
            cuts,
        })
    }
}

/// Write each `(rows, path)`: `jobs` worker threads take whole files, the
/// largest first (files range from a few hundred rows to tens of thousands:
/// taken in id order, the last large one kept one core busy while the other
/// had nothing left), each reading its rows (from its own frame cache),
/// parsing them and writing the file's row groups. A file is written the same
/// way whichever thread does it and whenever, so the bytes do not depend on
/// `jobs`. Returns each file's stats in `files` order, or the first error
/// (the workers stop at it).
pub fn write_all<R: FileRows>(
    input: &Input<'_>,
    files: &[(R, PathBuf)],
    jobs: usize,
) -> Result<Vec<FileStats>, BuildError> {
    let workers = jobs.clamp(1, files.len().max(1));
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&f| std::cmp::Reverse(files[f].0.count()));
    let next = AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<FileStats, BuildError>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let mut worker = match Worker::new(input) {
                    Ok(w) => w,
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        if let Ok(mut r) = results.lock() {
                            r[0] = Some(Err(e));
                        }
                        return;
                    }
                };
                let mut buf = Vec::new();
                while !failed.load(Ordering::Relaxed) {
                    let Some(&f) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let (rows, path) = &files[f];
                    let one = match rows.load(&mut buf) {
                        Ok(rows) => worker.write_file(rows, path),
                        Err(e) => Err(io_err(path, e)),
                    };
                    failed.fetch_or(one.is_err(), Ordering::Relaxed);
                    // A poisoned lock means another worker panicked; the scope re-raises that panic.
                    if let Ok(mut r) = results.lock() {
                        r[f] = Some(one);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut stats = Vec::with_capacity(files.len());
    for r in results {
        match r {
            Some(Ok(s)) => stats.push(s),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    if stats.len() < files.len() {
        return Err(first_file_err(files, "a writer thread stopped early"));
    }
    Ok(stats)
}

/// An error about the build's output as a whole, reported on its first file.
fn first_file_err<R>(files: &[(R, PathBuf)], what: &str) -> BuildError {
    BuildError::Io {
        path: files.first().map(|f| f.1.clone()).unwrap_or_default(),
        source: std::io::Error::other(what.to_string()),
    }
}

fn io_err(path: &Path, source: std::io::Error) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn pq_err(path: &Path, source: parquet::errors::ParquetError) -> BuildError {
    BuildError::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

/// A worker's reusable state: its frame cache and column builders.
struct Worker<'a> {
    input: &'a Input<'a>,
    cache: FrameCache<'a>,
    cols: Columns,
}

impl<'a> Worker<'a> {
    fn new(input: &'a Input<'a>) -> Result<Worker<'a>, BuildError> {
        let rows = usize::try_from(input.cuts.row_group_rows.min(4096)).unwrap_or(4096);
        Ok(Worker {
            input,
            cache: FrameCache::new(input.shards, input.frames, input.cuts.frame_cache)?,
            cols: Columns::new(rows),
        })
    }

    /// Write one file: its row groups ([`cut`]), each one Arrow batch.
    fn write_file(&mut self, rows: &[Meta], path: &Path) -> Result<FileStats, BuildError> {
        self.cache.next_file();
        let input = self.input;
        let mut stats = FileStats::default();
        let file = File::create(path).map_err(|e| io_err(path, e))?;
        let mut w = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            input.parquet.root_schema_ptr(),
            input.props.clone(),
        )
        .map_err(|e| pq_err(path, e))?;
        let factory = ArrowRowGroupWriterFactory::new(&w, input.head.clone());
        let groups = cut(rows, input.cuts.row_group_rows);
        for (g, group) in groups.into_iter().filter(|g| !g.is_empty()).enumerate() {
            let rows = &rows[group];
            for m in rows {
                self.push(m, &mut stats)?;
            }
            let batch = self.cols.finish(&input.schema).map_err(BuildError::Arrow)?;
            stats.arrow_bytes += arrow_bytes(&batch);
            let pieces = cut(rows, input.cuts.page_rows);
            let columns = factory
                .create_column_writers(g)
                .map_err(|e| pq_err(path, e))?;
            write_group(&mut w, columns, &batch, &pieces).map_err(|e| pq_err(path, e))?;
            stats.row_groups += 1;
        }
        let buf = w.into_inner().map_err(|e| pq_err(path, e))?;
        let file = buf.into_inner().map_err(|e| io_err(path, e.into_error()))?;
        file.sync_all().map_err(|e| io_err(path, e))?;
        stats.file_bytes = file.metadata().map_err(|e| io_err(path, e))?.len();
        Ok(stats)
    }

    /// Read one survivor's line, parse it, count it and add it to the batch.
    fn push(&mut self, m: &Meta, stats: &mut FileStats) -> Result<(), BuildError> {
        let input = self.input;
        let line = self.cache.line(m.frame, m.line)?;
        let mut parsed =
            Row::parse(line).map_err(|_| changed(input.shards, input.frames, m.frame))?;
        // The score under the rule this build applied, when it applied one.
        if let Some(score) = m.score() {
            parsed.row.relevance_score = Some(score);
        }
        stats.count(&parsed.row);
        self.cols.push(&parsed);
        Ok(())
    }
}

impl FileStats {
    /// Count one row.
    fn count(&mut self, row: &Row<'_>) {
        self.rows += 1;
        *self.years.entry(row.year).or_default() += 1;
        match self.domains.get_mut(row.domain.as_ref()) {
            Some(n) => *n += 1,
            None => {
                self.domains.insert(row.domain.to_string(), 1);
            }
        }
        let lang = row.lang.as_deref();
        match self.langs.iter_mut().find(|(l, _)| l.as_deref() == lang) {
            Some((_, n)) => *n += 1,
            None => {
                self.langs.insert(lang.map(str::to_string), 1);
            }
        }
        let version = row.extractor_version.as_deref();
        match self
            .versions
            .iter_mut()
            .find(|(v, _)| v.as_deref() == version)
        {
            Some((_, n)) => *n += 1,
            None => {
                self.versions.insert(version.map(str::to_string), 1);
            }
        }
    }

    /// Add the counts of `other` (of a row group, or of another file) to these.
    pub fn add(&mut self, other: FileStats) {
        self.rows += other.rows;
        self.row_groups += other.row_groups;
        self.arrow_bytes += other.arrow_bytes;
        self.file_bytes += other.file_bytes;
        for (y, n) in other.years {
            *self.years.entry(y).or_default() += n;
        }
        for (d, n) in other.domains {
            *self.domains.entry(d).or_default() += n;
        }
        for (l, n) in other.langs {
            *self.langs.entry(l).or_default() += n;
        }
        for (v, n) in other.versions {
            *self.versions.entry(v).or_default() += n;
        }
    }
}

/// Whether a data page of the file holds no values. `parquet` 60's
/// content-defined chunker can end a chunk before the first value a column
/// writer gets (its state carries over from the last row group, or the first
/// value is longer than the largest chunk), and the writer then writes a page
/// of no values at the start of the column chunk; `pyarrow` reads such a
/// column chunk as empty (or fails on the row group). Only page headers are
/// read.
#[cfg(test)]
pub fn has_empty_page(path: &Path) -> parquet::errors::Result<bool> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(File::open(path)?)?;
    for g in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(g)?;
        for c in 0..rg.num_columns() {
            let mut pages = rg.get_column_page_reader(c)?;
            while let Some(page) = pages.peek_next_page()? {
                if !page.is_dict && page.num_levels == Some(0) {
                    return Ok(true);
                }
                pages.skip_next_page()?;
            }
        }
    }
    Ok(false)
}

/// Is `field` one whose pages the writer cuts itself ([`PAGED`](super::schema::PAGED))?
fn is_paged(field: &arrow_schema::Field) -> bool {
    super::schema::PAGED.contains(&field.name().as_str())
}

/// Write one row group, column by column in schema order: a
/// [`PAGED`](super::schema::PAGED) column one page per piece of `pieces`
/// (its writer ends a page after each write), any other column through its
/// Arrow column writer (`columns`, one per field before the paged ones) in
/// one write (one page).
fn write_group<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    columns: Vec<ArrowColumnWriter>,
    batch: &RecordBatch,
    pieces: &[Range<usize>],
) -> parquet::errors::Result<()> {
    let schema = batch.schema();
    let paged = |f: &Arc<arrow_schema::Field>| is_paged(f);
    if columns.len() != schema.fields().iter().filter(|f| !paged(f)).count() {
        return Err(ParquetError::General(
            "a column with more than one leaf".into(),
        ));
    }
    let mut columns = columns.into_iter();
    let mut rg = w.next_row_group()?;
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if paged(field) {
            let mut col = rg
                .next_column()?
                .ok_or_else(|| ParquetError::General("fewer columns than fields".into()))?;
            write_pieces(
                col.typed::<ByteArrayType>(),
                array,
                field.is_nullable(),
                pieces,
            )?;
            col.close()?;
        } else {
            let mut column = columns
                .next()
                .ok_or_else(|| ParquetError::General("fewer column writers than fields".into()))?;
            for leaf in compute_leaves(field, array)? {
                column.write(&leaf)?;
            }
            column.close()?.append_to_row_group(&mut rg)?;
        }
    }
    rg.close()?;
    Ok(())
}

/// Write a string column one write (so one page) per piece.
fn write_pieces(
    w: &mut ColumnWriterImpl<'_, ByteArrayType>,
    array: &ArrayRef,
    nullable: bool,
    pieces: &[Range<usize>],
) -> parquet::errors::Result<()> {
    let texts = array
        .as_string_opt::<i64>()
        .ok_or_else(|| ParquetError::General("a paged column is not LargeUtf8".into()))?;
    // The row group's bytes copied once; each value is a slice of them.
    let offsets = texts.value_offsets();
    let at = |i: usize| usize::try_from(offsets[i]).unwrap_or(0);
    let first = at(0);
    let all = ByteArray::from(texts.value_data()[first..at(texts.len())].to_vec());
    let mut values = Vec::new();
    let mut defs = Vec::new();
    for piece in pieces {
        values.clear();
        defs.clear();
        for i in piece.clone() {
            if texts.is_valid(i) {
                values.push(all.slice(at(i) - first, at(i + 1) - at(i)));
                defs.push(1);
            } else {
                defs.push(0);
            }
        }
        // Levels are passed even when all are equal, so the writer takes the
        // piece as one batch whatever its nulls.
        w.write_batch(&values, nullable.then_some(defs.as_slice()), None)?;
    }
    Ok(())
}

/// The bytes a batch's rows use, as `datasets` counts them, not the
/// builders' rounded-up capacity.
fn arrow_bytes(batch: &RecordBatch) -> u64 {
    batch
        .columns()
        .iter()
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_buffer_memory_size()) as u64
        })
        .sum()
}

/// The error for a line that is not where pass 1 found it.
fn changed(shards: &[PathBuf], frames: &[FrameRef], frame: u32) -> BuildError {
    let f = frames[frame as usize];
    BuildError::Changed {
        path: shards[f.shard as usize].clone(),
        offset: f.offset,
    }
}

/// The current decoded frame of up to `cap` shards (least recently used goes first).
struct FrameCache<'a> {
    shards: &'a [PathBuf],
    frames: &'a [FrameRef],
    slots: Vec<Slot>,
    cap: usize,
    tick: u64,
    /// `tick` when the current file started.
    last_file: u64,
    decoder: Decoder,
    raw: Vec<u8>,
}

struct Slot {
    shard: u32,
    frame: u32,
    data: Vec<u8>,
    lines: Vec<(u32, u32)>,
    used: u64,
}

impl<'a> FrameCache<'a> {
    fn new(
        shards: &'a [PathBuf],
        frames: &'a [FrameRef],
        cap: usize,
    ) -> Result<FrameCache<'a>, BuildError> {
        Ok(FrameCache {
            shards,
            frames,
            slots: Vec::new(),
            cap: cap.max(1),
            tick: 0,
            last_file: 0,
            decoder: Decoder::new().map_err(|source| BuildError::Io {
                path: PathBuf::from("<zstd decoder>"),
                source,
            })?,
            raw: Vec::new(),
        })
    }

    fn changed(&self, frame: u32) -> BuildError {
        changed(self.shards, self.frames, frame)
    }

    /// A new file starts: forget the shards that neither the last file nor
    /// this one read yet. Files are taken largest first, not in id order, so
    /// a shard two files back is seldom read again, and keeping every shard
    /// ever read (up to `cap`, ~1 MB a decoded frame) made the writers' memory
    /// grow with the number of shards (104 MiB peak at 200k records, 50
    /// shards; 212 MiB at 1M, 250 shards).
    fn next_file(&mut self) {
        let since = self.last_file;
        self.slots.retain(|s| s.used > since);
        self.last_file = self.tick;
    }

    fn line(&mut self, frame: u32, line: u32) -> Result<&[u8], BuildError> {
        self.tick += 1;
        let f = self.frames[frame as usize];
        let slot = match self.slots.iter().position(|s| s.shard == f.shard) {
            Some(i) => i,
            None if self.slots.len() < self.cap => {
                self.slots.push(Slot {
                    shard: f.shard,
                    frame: u32::MAX,
                    data: Vec::new(),
                    lines: Vec::new(),
                    used: 0,
                });
                self.slots.len() - 1
            }
            None => {
                let (i, _) = self
                    .slots
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| s.used)
                    .ok_or_else(|| self.changed(frame))?;
                self.slots[i].shard = f.shard;
                self.slots[i].frame = u32::MAX;
                i
            }
        };
        if self.slots[slot].frame != frame {
            let path = &self.shards[f.shard as usize];
            read_at(path, f.offset, f.len as usize, &mut self.raw).map_err(|source| {
                BuildError::Io {
                    path: path.clone(),
                    source,
                }
            })?;
            let s = &mut self.slots[slot];
            s.frame = u32::MAX;
            if self.decoder.decode(&self.raw, &mut s.data).is_err() {
                return Err(self.changed(frame));
            }
            line_ranges(&s.data, &mut s.lines);
            s.frame = frame;
        }
        self.slots[slot].used = self.tick;
        match self.slots[slot].lines.get(line as usize).copied() {
            Some((a, b)) => Ok(&self.slots[slot].data[a as usize..b as usize]),
            None => Err(self.changed(frame)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Meta {
        Meta {
            id: 0,
            frame: 0,
            line: 0,
            url_key: 0,
            canonical_key: None,
            text_key: 0,
            relevant: true,
            score: super::super::scan::NO_SCORE,
            sig: super::super::near::NONE,
            updated: false,
            version: 0,
            withdrawn: 0,
        }
    }

    fn with_id(id: i64) -> Meta {
        Meta { id, ..m() }
    }

    #[test]
    fn cuts_follow_ids_not_positions() {
        let rows: Vec<Meta> = (0..20_000).map(with_id).collect();
        let cuts = cut(&rows, 64);
        assert!(cuts.len() > 150 && cuts.len() < 500, "{}", cuts.len());
        assert!(cuts.iter().all(|r| r.len() as u64 <= 64 * MAX_FACTOR));
        let starts = |rows: &[Meta]| -> Vec<i64> {
            cut(rows, 64).iter().map(|r| rows[r.start].id).collect()
        };
        let before = starts(&rows);
        // Remove a few rows near the start and add some at the end: every
        // cut after the edit stays on the same id.
        let edited: Vec<Meta> = (0..20_100)
            .filter(|id| ![3, 4, 500].contains(id))
            .map(with_id)
            .collect();
        let after = starts(&edited);
        let kept: Vec<&i64> = before.iter().filter(|id| **id > 500).collect();
        assert!(kept.iter().all(|id| after.contains(id)));
        assert_eq!(cut(&[], 10), vec![0..0]);
    }

    /// Write `batch` with `parquet`'s content-defined pages (64-256 KiB).
    fn write_with_cdc(batch: &RecordBatch, props: &WriterProperties, path: &Path) {
        let cdc = props
            .clone()
            .into_builder()
            .set_content_defined_chunking(Some(parquet::file::properties::CdcOptions {
                min_chunk_size: 64 << 10,
                max_chunk_size: 256 << 10,
                norm_level: 0,
            }))
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            File::create(path).unwrap(),
            batch.schema(),
            Some(cdc),
        )
        .unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
    }

    /// A first text longer than the largest content-defined chunk makes
    /// `parquet`'s chunker end a chunk before it: it writes an empty page,
    /// which [`has_empty_page`] sees. This writer cuts pages itself and
    /// writes none, and a paged column has one page per piece.
    #[test]
    fn an_empty_first_page_is_seen_and_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let schema = super::super::schema::schema();
        let big = "word ".repeat(80_000);
        let lines: Vec<String> = [big.as_str(), "short text", "third"]
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    r#"{{"id":{i},"url":"https://ex.com/{i}","domain":"ex.com","title":"T","text":"{t}","keywords":[],"fetched_at":"2026-10-09T18:12:33Z"}}"#
                )
            })
            .collect();
        let mut cols = Columns::new(2);
        for l in &lines {
            cols.push(&Row::parse(l.as_bytes()).unwrap());
        }
        let batch = cols.finish(&schema).unwrap();
        let props = super::super::schema::writer_properties(1, &schema).unwrap();
        let path = dir.path().join("cdc.parquet");
        write_with_cdc(&batch, &props, &path);
        assert!(has_empty_page(&path).unwrap());

        let shards: [PathBuf; 0] = [];
        let cuts = Cuts {
            row_group_rows: 1 << 20,
            page_rows: 1,
            frame_cache: 1,
        };
        let input = Input::new(&shards, &[], schema, props, cuts).unwrap();
        let path = dir.path().join("ours.parquet");
        let mut w = SerializedFileWriter::new(
            File::create(&path).unwrap(),
            input.parquet.root_schema_ptr(),
            input.props.clone(),
        )
        .unwrap();
        let columns = ArrowRowGroupWriterFactory::new(&w, input.head.clone())
            .create_column_writers(0)
            .unwrap();
        write_group(&mut w, columns, &batch, &[0..1, 1..3]).unwrap();
        w.close().unwrap();
        assert!(!has_empty_page(&path).unwrap());
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let rg = reader.get_row_group(0).unwrap();
        let pages = |c: usize| {
            let mut n = 0;
            let mut p = rg.get_column_page_reader(c).unwrap();
            while p.get_next_page().unwrap().is_some() {
                n += 1;
            }
            n
        };
        let text = input.schema.index_of("text").unwrap();
        assert_eq!(pages(text), 2, "one text page per piece");
        assert_eq!(pages(0), 1, "one id page per row group");
        let back = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
            File::open(&path).unwrap(),
            16,
        )
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
        assert_eq!(back, batch);
    }

    #[test]
    fn file_names_sort_by_first_id() {
        let ids = [-5i64, 0, 7, 300, i64::MAX];
        let names: Vec<String> = ids.iter().map(|&i| file_name(Some(i))).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(file_name(None).starts_with("train-"));
    }

    /// A frame that no longer decodes stops the build with an error (it does
    /// not hang the workers waiting for their turn), whatever the thread count.
    #[test]
    fn a_changed_shard_fails_every_row_group_pipeline() {
        let dir = tempfile::tempdir().unwrap();
        let shard = dir.path().join("s.jsonl.zst");
        std::fs::write(&shard, vec![7u8; 64]).unwrap();
        let frames = [FrameRef {
            shard: 0,
            offset: 0,
            len: 64,
        }];
        let shards = [shard.clone()];
        let schema = super::super::schema::schema();
        let props = super::super::schema::writer_properties(1, &schema).unwrap();
        let cuts = Cuts {
            row_group_rows: 2,
            page_rows: 1,
            frame_cache: 1,
        };
        let input = Input::new(&shards, &frames, schema, props, cuts).unwrap();
        let rows: Vec<Meta> = (0..40).map(|_| m()).collect();
        for jobs in [1, 2, 5] {
            let files: Vec<(&[Meta], PathBuf)> = vec![
                (&rows[..20], dir.path().join("a.tmp")),
                (&rows[20..], dir.path().join("b.tmp")),
            ];
            match write_all(&input, &files, jobs) {
                Err(BuildError::Changed { path, offset: 0 }) => assert_eq!(path, shard),
                other => panic!("{:?}", other.map(|s| s.len())),
            }
        }
    }
}
