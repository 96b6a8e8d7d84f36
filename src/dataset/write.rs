//! Pass 2: the survivors, already in id order, are cut into files and row
//! groups by their JSON size, then each file is written by a two-stage
//! pipeline: a reader thread fetches each line from its frame (a small cache
//! holds the current frame of each shard), parses it and fills Arrow batches;
//! the calling thread encodes them with the Parquet writer. Files are written
//! in parallel, each to `<name>.tmp`.
//!
//! Every cut depends on the data only, so the same shards give the same bytes.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
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
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, files.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((rows, path)) = files.get(i) else {
                        break;
                    };
                    let one = write_file(input, rows, path);
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

fn write_file(input: &Input<'_>, rows: &[Meta], path: &Path) -> Result<FileStats, BuildError> {
    let io_err = |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    };
    let pq_err = |source| BuildError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(io_err)?;
    let mut writer = ArrowWriter::try_new(
        BufWriter::with_capacity(1 << 20, file),
        input.schema.clone(),
        Some(input.props.clone()),
    )
    .map_err(pq_err)?;
    let (tx, rx) = sync_channel::<Piece>(2);
    let (produced, encoded) = std::thread::scope(|s| {
        let producer = s.spawn(move || produce(input, rows, |piece| tx.send(piece).is_ok()));
        let mut encoded: Result<(u64, u64), BuildError> = Ok((0, 0));
        for (batch, ends_group) in rx.iter() {
            let step = writer
                .write(&batch)
                .and_then(|_| if ends_group { writer.flush() } else { Ok(()) });
            match (step, &mut encoded) {
                (Err(e), _) => {
                    encoded = Err(pq_err(e));
                    break;
                }
                (Ok(()), Ok((groups, bytes))) => {
                    *groups += u64::from(ends_group);
                    *bytes += batch
                        .columns()
                        .iter()
                        .map(|c| c.get_buffer_memory_size() as u64)
                        .sum::<u64>();
                }
                (Ok(()), Err(_)) => {}
            }
        }
        drop(rx);
        let produced = producer.join().unwrap_or_else(|_| {
            Err(BuildError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("the reader thread panicked"),
            })
        });
        (produced, encoded)
    });
    let mut stats = produced?;
    let (groups, arrow_bytes) = encoded?;
    let buf = writer.into_inner().map_err(pq_err)?;
    let file = buf.into_inner().map_err(|e| io_err(e.into_error()))?;
    file.sync_all().map_err(io_err)?;
    stats.row_groups = groups;
    stats.arrow_bytes = arrow_bytes;
    stats.file_bytes = file.metadata().map_err(io_err)?.len();
    Ok(stats)
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
