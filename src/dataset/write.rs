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
use std::sync::mpsc::{Receiver, Sender, channel};
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
use super::row::Row;
use super::scan::{FrameRef, Meta};
use crate::store::shard::frames::{Decoder, line_ranges, read_at};

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
    /// Rows per `extractor_version` (`None`: records from before it was recorded).
    pub versions: BTreeMap<Option<String>, u64>,
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

/// The output files being written: one entry per file in each list.
struct Outputs {
    /// Taken when the file's footer is written.
    writers: Vec<Option<Writer>>,
    /// Make the column writers of a file's row groups.
    factories: Vec<ArrowRowGroupWriterFactory>,
    /// Second handles on the files, for the syncer thread.
    handles: Vec<File>,
}

/// What a worker sends the appender: the task's index and its row group.
type Done = (usize, Result<Encoded, BuildError>);

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
    let Outputs {
        mut writers,
        factories,
        handles,
    } = open_outputs(input, files)?;
    let tasks = plan(files, &input.cuts);
    let workers = jobs.clamp(1, tasks.len().max(1));
    // Tasks a worker may start beyond the next one to append.
    let turn = Turn::new(2 * workers);
    let next = AtomicUsize::new(0);
    let mut stats: Vec<FileStats> = vec![FileStats::default(); files.len()];
    std::thread::scope(|s| {
        let (sync_tx, sync_rx) = channel::<(usize, bool)>();
        let syncer = s.spawn(|| sync_files(&handles, files, sync_rx));
        let (tx, rx) = channel::<Done>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (tasks, factories, next, turn) = (&tasks, &factories, &next, &turn);
            s.spawn(move || work(input, files, tasks, factories, next, turn, tx));
        }
        drop(tx);
        let appended = append_in_order(
            &rx,
            &tasks,
            files,
            &mut writers,
            &mut stats,
            &sync_tx,
            &turn,
        );
        // Release any worker still waiting for its turn, then let the scope join them.
        turn.stop();
        drop(rx);
        drop(sync_tx);
        let synced = syncer
            .join()
            .unwrap_or_else(|_| Err(first_file_err(files, "the syncer thread panicked")));
        match (appended, synced) {
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
            (Ok(n), Ok(())) if n < tasks.len() => {
                Err(first_file_err(files, "a writer thread stopped early"))
            }
            (Ok(_), Ok(())) => Ok(()),
        }
    })?;
    Ok(stats)
}

/// Create every output file with its Parquet writer.
fn open_outputs(input: &Input<'_>, files: &[(&[Meta], PathBuf)]) -> Result<Outputs, BuildError> {
    let mut out = Outputs {
        writers: Vec::with_capacity(files.len()),
        factories: Vec::with_capacity(files.len()),
        handles: Vec::with_capacity(files.len()),
    };
    for (_, path) in files {
        let file = File::create(path).map_err(|source| io_err(path, source))?;
        out.handles
            .push(file.try_clone().map_err(|source| io_err(path, source))?);
        let (w, f) = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            input.schema.clone(),
            Some(input.props.clone()),
        )
        .and_then(ArrowWriter::into_serialized_writer)
        .map_err(|source| pq_err(path, source))?;
        out.writers.push(Some(w));
        out.factories.push(f);
    }
    Ok(out)
}

/// The row groups to make, file after file, each cut by the JSON size of its rows.
fn plan<'a>(files: &[(&'a [Meta], PathBuf)], cuts: &Cuts) -> Vec<Task<'a>> {
    let mut tasks = Vec::new();
    for (file, (rows, _)) in files.iter().enumerate() {
        let groups = cut(rows, cuts.row_group_bytes, cuts.row_group_rows);
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
    tasks
}

/// A worker thread: take the next task, wait for its turn, encode it, send it
/// on; stop at the end of the tasks, at the first error, or when told to.
fn work(
    input: &Input<'_>,
    files: &[(&[Meta], PathBuf)],
    tasks: &[Task<'_>],
    factories: &[ArrowRowGroupWriterFactory],
    next: &AtomicUsize,
    turn: &Turn,
    tx: Sender<Done>,
) {
    // A panicking worker must not leave the others waiting for a row group
    // that never comes: it stops them (the scope then re-raises the panic).
    let _guard = StopOnPanic(turn);
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
        if !turn.wait_for(t) {
            return;
        }
        let group = worker.encode(&factories[task.file], task, &files[task.file].1);
        let failed = group.is_err();
        if tx.send((t, group)).is_err() || failed {
            return;
        }
    }
}

/// The appender: receive encoded row groups in any order, append them to
/// their files in task order, and hand each file to the syncer after each of
/// its row groups. Returns how many were appended, or the first error.
fn append_in_order(
    rx: &Receiver<Done>,
    tasks: &[Task<'_>],
    files: &[(&[Meta], PathBuf)],
    writers: &mut [Option<Writer>],
    stats: &mut [FileStats],
    sync_tx: &Sender<(usize, bool)>,
    turn: &Turn,
) -> Result<usize, BuildError> {
    let mut pending: BTreeMap<usize, Encoded> = BTreeMap::new();
    let mut appended = 0usize;
    for (t, group) in rx.iter() {
        pending.insert(t, group?);
        while let Some(g) = pending.remove(&appended) {
            let task = &tasks[appended];
            let path = &files[task.file].1;
            append(
                &mut writers[task.file],
                task.last,
                g,
                &mut stats[task.file],
                path,
            )?;
            let _ = sync_tx.send((task.file, task.last));
            appended += 1;
            turn.advance(appended);
        }
    }
    Ok(appended)
}

/// The syncer thread: flushing to disk happens off the appender's path. After
/// each row group it starts the file's data on its way to disk (so the final
/// `sync_all` has little left to wait for), and syncs a finished file fully.
/// Returns the first error (and goes on draining the channel after it).
fn sync_files(
    handles: &[File],
    files: &[(&[Meta], PathBuf)],
    rx: Receiver<(usize, bool)>,
) -> Result<(), BuildError> {
    let mut first_error = None;
    for (f, finished) in rx.iter() {
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
}

/// An error about the build's output as a whole, reported on its first file.
fn first_file_err(files: &[(&[Meta], PathBuf)], what: &str) -> BuildError {
    BuildError::Io {
        path: files.first().map(|f| f.1.clone()).unwrap_or_default(),
        source: std::io::Error::other(what.to_string()),
    }
}

/// Whose turn it is: how many tasks the appender has appended, and whether
/// the workers must stop. A worker may start task `t` once fewer than
/// `window` tasks lie between it and the next one to append.
struct Turn {
    /// (tasks appended so far, stop)
    state: Mutex<(usize, bool)>,
    wake: Condvar,
    window: usize,
}

impl Turn {
    fn new(window: usize) -> Turn {
        Turn {
            state: Mutex::new((0, false)),
            wake: Condvar::new(),
            window,
        }
    }

    /// Wait until task `t` may start; false when the workers must stop instead.
    fn wait_for(&self, t: usize) -> bool {
        let Ok(mut p) = self.state.lock() else {
            return false;
        };
        while !p.1 && t >= p.0 + self.window {
            p = match self.wake.wait(p) {
                Ok(p) => p,
                Err(_) => return false,
            };
        }
        !p.1
    }

    /// Record that `appended` tasks are done.
    fn advance(&self, appended: usize) {
        if let Ok(mut p) = self.state.lock() {
            p.0 = appended;
        }
        self.wake.notify_all();
    }

    /// Tell every worker to stop (also after a panic elsewhere).
    fn stop(&self) {
        let mut p = self.state.lock().unwrap_or_else(|e| e.into_inner());
        p.1 = true;
        drop(p);
        self.wake.notify_all();
    }
}

/// Stops the workers when dropped by a panicking thread.
struct StopOnPanic<'a>(&'a Turn);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
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
    stats.add(group.stats);
    stats.row_groups += 1;
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
        let schema = &self.input.schema;
        let mut stats = FileStats::default();
        let mut writers = factory
            .create_column_writers(task.index)
            .map_err(|e| pq_err(path, e))?;
        for batch in batches(task.rows, self.input.cuts.batch_rows) {
            for m in batch {
                self.push(m, &mut stats)?;
            }
            let batch = self.cols.finish(schema).map_err(BuildError::Arrow)?;
            stats.arrow_bytes += arrow_bytes(&batch);
            write_batch(schema, &mut writers, &batch).map_err(|e| pq_err(path, e))?;
        }
        let chunks = writers
            .into_iter()
            .map(ArrowColumnWriter::close)
            .collect::<parquet::errors::Result<Vec<_>>>()
            .map_err(|e| pq_err(path, e))?;
        Ok(Encoded { chunks, stats })
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

/// A row group's rows in batches of `batch_rows`; an empty row group (of an
/// empty file) is one empty batch.
fn batches(rows: &[Meta], batch_rows: usize) -> Vec<&[Meta]> {
    if rows.is_empty() {
        vec![rows]
    } else {
        rows.chunks(batch_rows.max(1)).collect()
    }
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
            updated: false,
            version: 0,
            withdrawn: 0,
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
