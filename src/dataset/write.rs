//! Pass 2: the survivors, already in id order, are cut into files and row
//! groups by their JSON size, then each file is written by a
//! pipeline: a reader thread fetches each line from its frame (a small cache
//! holds the current frame of each shard), parses it and fills Arrow batches;
//! the calling thread hands each row group to one of a few encoder threads in
//! turn (the cores not busy with another file), and an appender thread writes
//! the encoded row groups in order. Files are written in parallel, each to
//! `<name>.tmp`.
//!
//! Every cut depends on the data only, so the same shards give the same bytes.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowColumnWriter, compute_leaves};
use parquet::file::properties::WriterProperties;

use super::BuildError;
use super::columns::Columns;
use super::frames::{Decoder, line_ranges, read_at};
use super::row::Row;
use super::scan::{FrameRef, Meta};

/// How the output is cut (all sizes are bytes of JSON input).
#[derive(Debug, Clone)]
pub struct Cuts {
    pub row_group_bytes: u64,
    pub row_group_rows: usize,
    pub batch_rows: usize,
    /// Shards whose current frame stays decoded at once, per file being written.
    pub frame_cache: usize,
}

/// What one file holds.
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    pub rows: u64,
    pub row_groups: u64,
    /// Size of the Arrow buffers written (the `num_bytes` the card reports).
    pub arrow_bytes: u64,
    pub file_bytes: u64,
    pub years: BTreeMap<Option<i32>, u64>,
    pub domains: HashMap<String, u64>,
}

/// Consecutive ranges of `rows`, each about `limit` bytes of JSON (at least one row).
pub fn cut(rows: &[Meta], limit: u64, max_rows: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (i, m) in rows.iter().enumerate() {
        if i > start && (acc + u64::from(m.raw_len) > limit || i - start >= max_rows) {
            out.push(start..i);
            start = i;
            acc = 0;
        }
        acc += u64::from(m.raw_len);
    }
    if start < rows.len() || out.is_empty() {
        out.push(start..rows.len());
    }
    out
}

/// Everything a file writer reads.
pub struct Input<'a> {
    pub shards: &'a [PathBuf],
    pub frames: &'a [FrameRef],
    pub schema: SchemaRef,
    pub props: WriterProperties,
    pub cuts: Cuts,
}

/// Write each `(rows, path)` with up to `jobs` files at a time.
pub fn write_all(
    input: &Input<'_>,
    files: &[(&[Meta], PathBuf)],
    jobs: usize,
) -> Result<Vec<FileStats>, BuildError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<FileStats, BuildError>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    let writers = jobs.clamp(1, files.len().max(1));
    // Cores left over when there are fewer files than jobs encode row groups in parallel.
    let encoders = (jobs / writers).max(1);
    std::thread::scope(|s| {
        for _ in 0..writers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((rows, path)) = files.get(i) else {
                        break;
                    };
                    let one = write_file(input, rows, path, encoders);
                    let failed = one.is_err();
                    if let Ok(mut r) = results.lock() {
                        r[i] = Some(one);
                    }
                    if failed {
                        next.store(files.len(), Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut out = Vec::with_capacity(files.len());
    for r in results {
        match r {
            Some(r) => out.push(r?),
            None => continue,
        }
    }
    Ok(out)
}

/// One batch for the encoder, and whether a row group ends after it.
type Piece = (RecordBatch, bool);

/// What an encoder thread gets: the column writers of a new row group (with
/// its first batch), a batch, and whether the row group ends after it.
type Job = (Option<Vec<ArrowColumnWriter>>, RecordBatch, bool);

/// Write one file. Row groups are encoded by `encoders` threads in turn (row
/// group k by thread k % encoders) and appended in order by another, so the
/// bytes do not depend on the number of threads.
fn write_file(
    input: &Input<'_>,
    rows: &[Meta],
    path: &Path,
    encoders: usize,
) -> Result<FileStats, BuildError> {
    let io_err = |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    let pq_err = |source| BuildError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(io_err)?;
    let (mut file_writer, factory) = ArrowWriter::try_new(
        BufWriter::with_capacity(1 << 20, file),
        input.schema.clone(),
        Some(input.props.clone()),
    )
    .and_then(ArrowWriter::into_serialized_writer)
    .map_err(pq_err)?;
    let encoders = encoders.max(1);
    let (tx, rx) = sync_channel::<Piece>(2);
    let (produced, encoded, appended) = std::thread::scope(|s| {
        let producer = s.spawn(move || produce(input, rows, |piece| tx.send(piece).is_ok()));
        let mut job_txs = Vec::with_capacity(encoders);
        let mut chunk_rxs = Vec::with_capacity(encoders);
        for _ in 0..encoders {
            let (job_tx, job_rx) = sync_channel::<Job>(2);
            let (chunk_tx, chunk_rx) =
                sync_channel::<parquet::errors::Result<Vec<ArrowColumnChunk>>>(1);
            let schema = input.schema.clone();
            s.spawn(move || encode(&schema, job_rx, chunk_tx));
            job_txs.push(job_tx);
            chunk_rxs.push(chunk_rx);
        }
        let file_writer = &mut file_writer;
        let appender = s.spawn(move || -> parquet::errors::Result<()> {
            for k in 0.. {
                let Ok(chunks) = chunk_rxs[k % chunk_rxs.len()].recv() else {
                    return Ok(());
                };
                let mut group = file_writer.next_row_group()?;
                for chunk in chunks? {
                    chunk.append_to_row_group(&mut group)?;
                }
                group.close()?;
            }
            Ok(())
        });
        let mut encoded: Result<(u64, u64), BuildError> = Ok((0, 0));
        let mut group = 0usize;
        let mut open = false;
        for (batch, ends_group) in rx.iter() {
            let writers = if open {
                None
            } else {
                match factory.create_column_writers(group) {
                    Ok(w) => Some(w),
                    Err(e) => {
                        encoded = Err(pq_err(e));
                        break;
                    }
                }
            };
            let bytes = batch
                .columns()
                .iter()
                .map(|c| c.get_buffer_memory_size() as u64)
                .sum::<u64>();
            if job_txs[group % encoders]
                .send((writers, batch, ends_group))
                .is_err()
            {
                // The encoder stopped on an error; the appender reports it.
                break;
            }
            open = !ends_group;
            if let Ok((groups, b)) = &mut encoded {
                *groups += u64::from(ends_group);
                *b += bytes;
            }
            group += usize::from(ends_group);
        }
        drop(rx);
        drop(job_txs);
        let appended = appender.join().unwrap_or_else(|_| {
            Err(parquet::errors::ParquetError::General(
                "the Parquet appender panicked".into(),
            ))
        });
        let produced = producer.join().unwrap_or_else(|_| {
            Err(BuildError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("the reader thread panicked"),
            })
        });
        (produced, encoded, appended)
    });
    let mut stats = produced?;
    let (groups, arrow_bytes) = encoded?;
    appended.map_err(pq_err)?;
    let buf = file_writer.into_inner().map_err(pq_err)?;
    let file = buf.into_inner().map_err(|e| io_err(e.into_error()))?;
    file.sync_all().map_err(io_err)?;
    stats.row_groups = groups;
    stats.arrow_bytes = arrow_bytes;
    stats.file_bytes = file.metadata().map_err(io_err)?.len();
    Ok(stats)
}

/// Encode the row groups handed to one encoder thread, in order, and hand each
/// one's column chunks to the appender (stops at the first error).
fn encode(
    schema: &SchemaRef,
    jobs: Receiver<Job>,
    out: SyncSender<parquet::errors::Result<Vec<ArrowColumnChunk>>>,
) {
    let mut writers: Vec<ArrowColumnWriter> = Vec::new();
    for (fresh, batch, ends_group) in jobs.iter() {
        if let Some(w) = fresh {
            writers = w;
        }
        let step = (|| {
            let mut it = writers.iter_mut();
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                for leaf in compute_leaves(field.as_ref(), column)? {
                    match it.next() {
                        Some(w) => w.write(&leaf)?,
                        None => {
                            return Err(parquet::errors::ParquetError::General(
                                "more leaves than column writers".into(),
                            ));
                        }
                    }
                }
            }
            Ok(())
        })();
        let done = match step {
            Err(e) => Some(Err(e)),
            Ok(()) if ends_group => Some(
                std::mem::take(&mut writers)
                    .into_iter()
                    .map(ArrowColumnWriter::close)
                    .collect(),
            ),
            Ok(()) => None,
        };
        if let Some(result) = done {
            let failed = result.is_err();
            if out.send(result).is_err() || failed {
                return;
            }
        }
    }
}

/// Read the rows in order and hand over batches; stops early when `send` says the encoder is gone.
fn produce(
    input: &Input<'_>,
    rows: &[Meta],
    mut send: impl FnMut(Piece) -> bool,
) -> Result<FileStats, BuildError> {
    let mut stats = FileStats::default();
    let mut cache = FrameCache::new(input.shards, input.frames, input.cuts.frame_cache)?;
    let mut cols = Columns::new(&input.schema, input.cuts.batch_rows);
    for group in cut(rows, input.cuts.row_group_bytes, input.cuts.row_group_rows) {
        let group = &rows[group];
        let batches = group.chunks(input.cuts.batch_rows.max(1));
        let last = batches.len().saturating_sub(1);
        for (b, batch) in batches.enumerate() {
            for m in batch {
                let line = cache.line(m.frame, m.line)?;
                let parsed =
                    Row::parse(line).map_err(|_| changed(input.shards, input.frames, m.frame))?;
                *stats.years.entry(parsed.row.year).or_default() += 1;
                match stats.domains.get_mut(parsed.row.domain.as_ref()) {
                    Some(n) => *n += 1,
                    None => {
                        stats.domains.insert(parsed.row.domain.to_string(), 1);
                    }
                }
                cols.push(&parsed);
                stats.rows += 1;
            }
            let batch = cols.finish(&input.schema).map_err(BuildError::Arrow)?;
            if !send((batch, b == last)) {
                return Ok(stats);
            }
        }
    }
    if rows.is_empty() {
        let batch = cols.finish(&input.schema).map_err(BuildError::Arrow)?;
        send((batch, true));
    }
    Ok(stats)
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

    fn m(raw_len: u32) -> Meta {
        Meta {
            id: 0,
            frame: 0,
            line: 0,
            raw_len,
            url_key: 0,
            canonical_key: None,
            text_key: None,
            relevant: true,
            optional: 0,
        }
    }

    #[test]
    fn cuts_by_bytes_and_rows() {
        let rows: Vec<Meta> = [5, 5, 5, 20, 1].into_iter().map(m).collect();
        assert_eq!(cut(&rows, 10, 100), vec![0..2, 2..3, 3..4, 4..5]);
        assert_eq!(cut(&rows, 1000, 2), vec![0..2, 2..4, 4..5]);
        assert_eq!(cut(&[], 10, 2), vec![0..0]);
    }
}
