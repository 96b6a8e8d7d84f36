//! Pass 2: the survivors, already in id order, are cut into files and row
//! groups by their JSON size. Each row group is one task for a pool of worker
//! threads: a worker fetches each line from its frame (its own small cache
//! holds the current frame of each shard), parses it, fills Arrow batches and
//! encodes them into the row group's column chunks. The calling thread appends
//! the finished row groups to their files in order; each file is written to
//! `<name>.tmp`.
//!
//! Every cut depends on the data only, so the same shards give the same bytes.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Condvar, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, compute_leaves,
};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

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
    /// Bytes of Arrow data written, used bytes rather than buffer capacity
    /// (the `num_bytes` and `dataset_size` the card reports).
    pub arrow_bytes: u64,
    pub file_bytes: u64,
    pub years: BTreeMap<Option<i32>, u64>,
    pub domains: HashMap<String, u64>,
    /// Rows per `lang` (`None`: no language recorded).
    pub langs: HashMap<Option<String>, u64>,
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

/// One row group to make: which file it goes to and its rows.
struct Task<'a> {
    file: usize,
    /// Index of the row group in its file.
    index: usize,
    rows: &'a [Meta],
    /// The last row group of its file.
    last: bool,
}

/// A row group encoded by a worker, waiting to be appended to its file.
struct Encoded {
    chunks: Vec<ArrowColumnChunk>,
    stats: FileStats,
}

/// An open output file.
type Writer = SerializedFileWriter<BufWriter<File>>;

/// Write each `(rows, path)`. Every row group of every file is one task:
/// `jobs` worker threads take tasks in order, each reading its rows (from its
/// own frame cache), parsing them and encoding the whole row group; the
/// calling thread appends the encoded row groups to their files strictly in
/// order. A worker does not start more than a few tasks ahead of the appender,
/// so at most that many encoded row groups wait in memory. Each row group is
/// encoded the same way whichever thread does it, so the bytes do not depend
/// on `jobs`.
pub fn write_all(
    input: &Input<'_>,
    files: &[(&[Meta], PathBuf)],
    jobs: usize,
) -> Result<Vec<FileStats>, BuildError> {
    let mut writers: Vec<Option<Writer>> = Vec::with_capacity(files.len());
    let mut factories = Vec::with_capacity(files.len());
    // Second handles for the syncer thread.
    let mut handles = Vec::with_capacity(files.len());
    for (_, path) in files {
        let file = File::create(path).map_err(|source| io_err(path, source))?;
        handles.push(file.try_clone().map_err(|source| io_err(path, source))?);
        let (w, f) = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            input.schema.clone(),
            Some(input.props.clone()),
        )
        .and_then(ArrowWriter::into_serialized_writer)
        .map_err(|source| pq_err(path, source))?;
        writers.push(Some(w));
        factories.push(f);
    }
    let mut tasks = Vec::new();
    for (file, (rows, _)) in files.iter().enumerate() {
        let groups = cut(rows, input.cuts.row_group_bytes, input.cuts.row_group_rows);
        let n = groups.len();
        for (k, g) in groups.into_iter().enumerate() {
            tasks.push(Task {
                file,
                index: k,
                rows: &rows[g],
                last: k + 1 == n,
            });
        }
    }
    let workers = jobs.clamp(1, tasks.len().max(1));
    // Tasks a worker may start beyond the next one to append.
    let window = 2 * workers;
    let next = AtomicUsize::new(0);
    // (tasks appended so far, stop) and its wake-up.
    let progress = Mutex::new((0usize, false));
    let wake = Condvar::new();
    let (tx, rx) = channel::<(usize, Result<Encoded, BuildError>)>();
    let mut stats: Vec<FileStats> = vec![FileStats::default(); files.len()];
    let mut failure: Option<BuildError> = None;
    std::thread::scope(|s| {
        // Flushing to disk happens off the appender's path: after each row
        // group the syncer starts the file's data on its way to disk (so the
        // final `sync_all` has little left to wait for), and syncs a finished
        // file fully.
        let (sync_tx, sync_rx) = channel::<(usize, bool)>();
        let handles = &handles;
        let syncer = s.spawn(move || -> Result<(), BuildError> {
            let mut first_error = None;
            for (f, finished) in sync_rx.iter() {
                if first_error.is_some() {
                    continue;
                }
                let synced = if finished {
                    handles[f].sync_all()
                } else {
                    handles[f].sync_data()
                };
                if let Err(e) = synced {
                    first_error = Some(io_err(&files[f].1, e));
                }
            }
            first_error.map_or(Ok(()), Err)
        });
        for _ in 0..workers {
            let tx = tx.clone();
            let (tasks, factories, next, progress, wake) =
                (&tasks, &factories, &next, &progress, &wake);
            s.spawn(move || {
                // A panicking worker must not leave the others waiting for a
                // row group that never comes: it stops them (the scope then
                // re-raises the panic).
                let _guard = StopOnPanic(progress, wake);
                let mut worker = match Worker::new(input) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.send((next.fetch_add(1, Ordering::Relaxed), Err(e)));
                        return;
                    }
                };
                loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(t) else { break };
                    {
                        let Ok(mut p) = progress.lock() else { return };
                        while !p.1 && t >= p.0 + window {
                            p = match wake.wait(p) {
                                Ok(p) => p,
                                Err(_) => return,
                            };
                        }
                        if p.1 {
                            return;
                        }
                    }
                    let group = worker.encode(&factories[task.file], task, &files[task.file].1);
                    let failed = group.is_err();
                    if tx.send((t, group)).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Encoded> = BTreeMap::new();
        let mut appended = 0usize;
        for (t, group) in rx.iter() {
            match group {
                Ok(g) => {
                    pending.insert(t, g);
                }
                Err(e) => {
                    failure.get_or_insert(e);
                    break;
                }
            }
            while let Some(g) = pending.remove(&appended) {
                let task = &tasks[appended];
                let path = &files[task.file].1;
                if let Err(e) = append(
                    &mut writers[task.file],
                    task.last,
                    g,
                    &mut stats[task.file],
                    path,
                ) {
                    failure = Some(e);
                    break;
                }
                let _ = sync_tx.send((task.file, task.last));
                appended += 1;
                if let Ok(mut p) = progress.lock() {
                    p.0 = appended;
                }
                wake.notify_all();
            }
            if failure.is_some() {
                break;
            }
        }
        // Release any worker still waiting for its turn, then let the scope join them.
        if let Ok(mut p) = progress.lock() {
            p.1 = true;
        }
        wake.notify_all();
        drop(rx);
        drop(sync_tx);
        let synced = syncer.join().unwrap_or_else(|_| {
            Err(BuildError::Io {
                path: files.first().map(|f| f.1.clone()).unwrap_or_default(),
                source: std::io::Error::other("the syncer thread panicked"),
            })
        });
        if let Err(e) = synced {
            failure.get_or_insert(e);
        }
        if failure.is_none() && appended < tasks.len() {
            failure = Some(BuildError::Io {
                path: files.first().map(|f| f.1.clone()).unwrap_or_default(),
                source: std::io::Error::other("a writer thread stopped early"),
            });
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

/// Sets the stop flag when dropped by a panicking thread.
struct StopOnPanic<'a>(&'a Mutex<(usize, bool)>, &'a Condvar);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut p = self.0.lock().unwrap_or_else(|e| e.into_inner());
            p.1 = true;
            drop(p);
            self.1.notify_all();
        }
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

/// Append one encoded row group to its file (and write the footer after its last).
fn append(
    writer: &mut Option<Writer>,
    last: bool,
    group: Encoded,
    stats: &mut FileStats,
    path: &Path,
) -> Result<(), BuildError> {
    let w = writer
        .as_mut()
        .ok_or_else(|| io_err(path, std::io::Error::other("file already finished")))?;
    let mut rg = w.next_row_group().map_err(|e| pq_err(path, e))?;
    for chunk in group.chunks {
        chunk
            .append_to_row_group(&mut rg)
            .map_err(|e| pq_err(path, e))?;
    }
    rg.close().map_err(|e| pq_err(path, e))?;
    let g = group.stats;
    stats.rows += g.rows;
    stats.row_groups += 1;
    stats.arrow_bytes += g.arrow_bytes;
    for (y, n) in g.years {
        *stats.years.entry(y).or_default() += n;
    }
    for (d, n) in g.domains {
        *stats.domains.entry(d).or_default() += n;
    }
    for (l, n) in g.langs {
        *stats.langs.entry(l).or_default() += n;
    }
    if last && let Some(w) = writer.take() {
        let buf = w.into_inner().map_err(|e| pq_err(path, e))?;
        let file = buf.into_inner().map_err(|e| io_err(path, e.into_error()))?;
        // The syncer thread syncs it (through its own handle).
        stats.file_bytes = file.metadata().map_err(|e| io_err(path, e))?.len();
    }
    Ok(())
}

/// A worker's reusable state: its frame cache and column builders.
struct Worker<'a> {
    input: &'a Input<'a>,
    cache: FrameCache<'a>,
    cols: Columns,
}

impl<'a> Worker<'a> {
    fn new(input: &'a Input<'a>) -> Result<Worker<'a>, BuildError> {
        Ok(Worker {
            input,
            cache: FrameCache::new(input.shards, input.frames, input.cuts.frame_cache)?,
            cols: Columns::new(input.cuts.batch_rows),
        })
    }

    /// Read, parse and encode one row group, in batches of `batch_rows` rows.
    fn encode(
        &mut self,
        factory: &ArrowRowGroupWriterFactory,
        task: &Task<'_>,
        path: &Path,
    ) -> Result<Encoded, BuildError> {
        let input = self.input;
        let mut stats = FileStats::default();
        let mut writers = factory
            .create_column_writers(task.index)
            .map_err(|e| pq_err(path, e))?;
        // An empty file still gets one (empty) row group, of one empty batch.
        let empty: [&[Meta]; 1] = [&[]];
        let batches: Vec<&[Meta]> = if task.rows.is_empty() {
            empty.to_vec()
        } else {
            task.rows.chunks(input.cuts.batch_rows.max(1)).collect()
        };
        for batch in batches {
            for m in batch {
                let line = self.cache.line(m.frame, m.line)?;
                let mut parsed =
                    Row::parse(line).map_err(|_| changed(input.shards, input.frames, m.frame))?;
                // The score under the rule this build applied, when it applied one.
                if let Some(score) = m.score() {
                    parsed.row.relevance_score = Some(score);
                }
                *stats.years.entry(parsed.row.year).or_default() += 1;
                match stats.domains.get_mut(parsed.row.domain.as_ref()) {
                    Some(n) => *n += 1,
                    None => {
                        stats.domains.insert(parsed.row.domain.to_string(), 1);
                    }
                }
                let lang = parsed.row.lang.as_deref();
                match stats.langs.iter_mut().find(|(l, _)| l.as_deref() == lang) {
                    Some((_, n)) => *n += 1,
                    None => {
                        stats.langs.insert(lang.map(str::to_string), 1);
                    }
                }
                self.cols.push(&parsed);
                stats.rows += 1;
            }
            let batch = self.cols.finish(&input.schema).map_err(BuildError::Arrow)?;
            stats.arrow_bytes += batch
                .columns()
                .iter()
                .map(|c| {
                    // The bytes the rows use, as `datasets` counts them, not
                    // the builders' rounded-up capacity.
                    c.to_data()
                        .get_slice_memory_size()
                        .unwrap_or_else(|_| c.get_buffer_memory_size()) as u64
                })
                .sum::<u64>();
            write_batch(&input.schema, &mut writers, &batch).map_err(|e| pq_err(path, e))?;
        }
        let chunks = writers
            .into_iter()
            .map(ArrowColumnWriter::close)
            .collect::<parquet::errors::Result<Vec<_>>>()
            .map_err(|e| pq_err(path, e))?;
        Ok(Encoded { chunks, stats })
    }
}

/// Hand one batch's leaves to the row group's column writers.
fn write_batch(
    schema: &SchemaRef,
    writers: &mut [ArrowColumnWriter],
    batch: &RecordBatch,
) -> parquet::errors::Result<()> {
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
            text_key: 0,
            relevant: true,
            score: super::super::scan::NO_SCORE,
            sig: super::super::near::NONE,
        }
    }

    #[test]
    fn cuts_by_bytes_and_rows() {
        let rows: Vec<Meta> = [5, 5, 5, 20, 1].into_iter().map(m).collect();
        assert_eq!(cut(&rows, 10, 100), vec![0..2, 2..3, 3..4, 4..5]);
        assert_eq!(cut(&rows, 1000, 2), vec![0..2, 2..4, 4..5]);
        assert_eq!(cut(&[], 10, 2), vec![0..0]);
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
        let input = Input {
            shards: &shards,
            frames: &frames,
            schema,
            props: super::super::schema::writer_properties(1).unwrap(),
            cuts: Cuts {
                row_group_bytes: u64::MAX,
                row_group_rows: 2,
                batch_rows: 1,
                frame_cache: 1,
            },
        };
        let rows: Vec<Meta> = (0..40).map(|_| m(10)).collect();
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
