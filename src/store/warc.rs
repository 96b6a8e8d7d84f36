//! WARC archives: `data/warc/<run-id>.warc.gz`, WARC/1.1, one gzip member
//! per record (the layout every WARC tool reads and seeks in).
//!
//! A file starts with a `warcinfo` record; then each archived fetch is a
//! group of members written with one `write`: the `response` (status line,
//! headers and body as received, before content decoding), its `request`
//! (as sent), for a rendered page a `conversion` record holding the DOM the
//! browser built ([`add_rendered`]), and, for a stored article, a `metadata` record with our record
//! id, run id, fetch time and consent signals ([`Provenance`]). The record's
//! `warc_offset` is the offset of the response member, so one page is read
//! with one seek ([`read_at`]).
//!
//! Crash safety, like the shards: a group is appended whole; a failed write
//! cuts the file back to the end of the last whole group; [`WarcWriter::sync`]
//! runs before every shard frame, so a record a shard refers to is always on
//! disk. A SIGKILL in the middle of a write leaves at worst a torn last
//! member, which [`read_records`] reports as `truncated_bytes`.
//!
//! Built here (pure): [`capture`] turns a fetched exchange into its response
//! and request members (on a worker, so the engine only appends bytes).
//!
//! `crawl.archive` says what is kept: `none`, `articles` (the responses of
//! stored articles) or `all`. The fetch keeps what a record needs
//! (`Request::keep_raw`: the raw bytes of an encoded body, the request headers
//! as sent, the answer's version). A page that says `noarchive` (robots meta or
//! `X-Robots-Tag`) or that is withheld for AI use is never archived. WARC files
//! are never committed: they are uploaded to the Hub's `raw/` or kept as an
//! Actions artifact.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use ring::digest::{Context, SHA1_FOR_LEGACY_USE_ONLY};

use crate::net::Wire;
use crate::record::{Provenance, when};

/// gzip level of the members (flate2's default; level 1 is ~15% larger).
const LEVEL: u32 = 6;

/// The software named in each file's `warcinfo` record.
const SOFTWARE: &str = concat!("scraper/", env!("CARGO_PKG_VERSION"));

/// A WARC file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    #[error(
        "cannot write WARC file {path}: {source} (is the disk full?); records up to the last whole one are safe"
    )]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read WARC file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
}

/// A response and its request as gzip members, ready to append (response
/// first, so the group starts at the response's offset).
pub struct Captured {
    pub members: Vec<u8>,
    pub(crate) response_id: String,
    pub target: String,
    pub date: String,
    /// Keeps the fetch's share of the body budget until the bytes are written.
    pub hold: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Captured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Captured")
            .field("target", &self.target)
            .field("bytes", &self.members.len())
            .finish()
    }
}

/// A [`Provenance`] as `application/warc-fields` (its WARC location aside:
/// that is where the record is).
fn provenance_fields(p: &Provenance) -> String {
    let mut s = String::new();
    let mut field = |k: &str, v: &str| {
        s.push_str(k);
        s.push_str(": ");
        s.extend(v.chars().filter(|c| !c.is_control()));
        s.push_str("\r\n");
    };
    field("scraper-record-id", &p.id.to_string());
    field("fetched-at", &crate::date::format_utc(p.fetched_at));
    if let Some(d) = p.extracted_on {
        field("extracted-on", &d.format("%Y-%m-%d").to_string());
    }
    if let Some(r) = &p.run_id {
        field("run-id", r);
    }
    if let Some(c) = &p.crawler {
        field("crawler", c);
    }
    if let Some(h) = &p.robots_hash {
        field("robots-hash", h);
    }
    if let Some(r) = p.ai_reserved {
        field("ai-reserved", if r { "true" } else { "false" });
    }
    for a in &p.ai_signals {
        field("ai-signal", a);
    }
    if p.updated {
        field("updated", "true");
    }
    if let Some(m) = p.listed_modified {
        field("listed-modified", &m.format("%Y-%m-%d").to_string());
    }
    s
}

/// A metadata record's block read back; `None` without a record id.
pub(crate) fn parse_provenance(block: &[u8]) -> Option<Provenance> {
    let text = std::str::from_utf8(block).ok()?;
    let mut p = Provenance::default();
    let mut id = None;
    let mut fetched_at = None;
    for line in text.split("\r\n") {
        let Some((k, v)) = line.split_once(": ") else {
            continue;
        };
        match k {
            "scraper-record-id" => id = v.parse().ok(),
            "fetched-at" => fetched_at = when::parse_instant(v),
            "extracted-on" => p.extracted_on = when::parse_day(v),
            "run-id" => p.run_id = Some(v.to_string()),
            "crawler" => p.crawler = Some(v.to_string()),
            "robots-hash" => p.robots_hash = Some(v.to_string()),
            "ai-reserved" => p.ai_reserved = Some(v == "true"),
            "ai-signal" => p.ai_signals.push(v.to_string()),
            "updated" => p.updated = v == "true",
            "listed-modified" => p.listed_modified = when::parse_day(v),
            _ => {}
        }
    }
    p.id = id?;
    p.fetched_at = fetched_at?;
    Some(p)
}

/// RFC 4648 base32 (upper case, padded), as WARC digests are written.
pub(crate) fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = buf.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(char::from(ALPHABET[(n >> (35 - 5 * i) & 31) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `sha1:<base32>` of the concatenation of `parts`.
pub(crate) fn sha1(parts: &[&[u8]]) -> String {
    let mut ctx = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
    for p in parts {
        ctx.update(p);
    }
    format!("sha1:{}", base32(ctx.finish().as_ref()))
}

/// A new `<urn:uuid:...>` (version 4, from the system's random source).
pub fn record_id() -> String {
    let mut b = [0u8; 16];
    // The OS random source does not fail on the systems we run on; a
    // failure leaves zeros, which the time-based fallback below replaces.
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = xxhash_rust::xxh3::xxh3_128(&t.to_le_bytes()).to_le_bytes();
    }
    b[6] = b[6] & 0x0f | 0x40;
    b[8] = b[8] & 0x3f | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// `2026-12-01T23:40:01.123456Z` (WARC/1.1 allows fractions of a second).
fn warc_date(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// One record as a gzip member: the WARC head (`fields` plus
/// `Content-Length`), then the block's parts, then the two CRLFs.
fn member(fields: &[(&str, &str)], block: &[&[u8]]) -> Vec<u8> {
    let len: usize = block.iter().map(|b| b.len()).sum();
    let mut head = String::from("WARC/1.1\r\n");
    for (k, v) in fields {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(len / 4 + 256),
        flate2::Compression::new(LEVEL),
    );
    // Writes into a Vec cannot fail.
    let _ = gz.write_all(head.as_bytes());
    for b in block {
        let _ = gz.write_all(b);
    }
    let _ = gz.write_all(b"\r\n\r\n");
    gz.finish().unwrap_or_default()
}

/// An HTTP head: the first line, then `name: value` lines, then a blank line.
fn http_head(first: &str, headers: &[(String, Vec<u8>)], response: bool) -> Vec<u8> {
    let mut h = Vec::with_capacity(1024);
    h.extend_from_slice(first.as_bytes());
    h.extend_from_slice(b"\r\n");
    for (k, v) in headers {
        // The body is stored without its chunked framing (hyper removed it):
        // readers must not try to de-chunk it, so the header is renamed, as
        // Common Crawl does.
        if response && k == "transfer-encoding" {
            h.extend_from_slice(b"x-crawler-transfer-encoding");
        } else {
            h.extend_from_slice(k.as_bytes());
        }
        h.extend_from_slice(b": ");
        h.extend(v.iter().filter(|&&b| b != b'\r' && b != b'\n'));
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// The response and request members of one exchange. `body` is the decoded
/// body; the payload stored is the raw one (`wire.raw_body` when the body
/// was encoded).
pub(crate) fn capture(url: &str, wire: &Wire, body: &[u8]) -> Captured {
    let payload: &[u8] = if wire.raw_body.is_empty() {
        body
    } else {
        &wire.raw_body
    };
    let status_line = format!("{} {} {}", wire.version, wire.status, wire.reason);
    let head = http_head(status_line.trim_end(), &wire.headers, true);
    let date = warc_date(wire.date);
    let response_id = record_id();
    let ip = wire.ip.map(|ip| ip.to_string());
    let payload_digest = sha1(&[payload]);
    let block_digest = sha1(&[&head, payload]);
    let mut fields = vec![
        ("WARC-Type", "response"),
        ("WARC-Record-ID", response_id.as_str()),
        ("WARC-Date", date.as_str()),
        ("WARC-Target-URI", url),
    ];
    if let Some(ip) = &ip {
        fields.push(("WARC-IP-Address", ip));
    }
    fields.extend([
        ("WARC-Payload-Digest", payload_digest.as_str()),
        ("WARC-Block-Digest", block_digest.as_str()),
        ("Content-Type", "application/http;msgtype=response"),
    ]);
    let mut members = member(&fields, &[&head, payload]);
    let request_line = format!("GET {} {}", wire.request_target, wire.version);
    let req = http_head(&request_line, &wire.request_headers, false);
    let request_id = record_id();
    let req_digest = sha1(&[&req]);
    let mut fields = vec![
        ("WARC-Type", "request"),
        ("WARC-Record-ID", request_id.as_str()),
        ("WARC-Date", date.as_str()),
        ("WARC-Target-URI", url),
        ("WARC-Concurrent-To", response_id.as_str()),
    ];
    if let Some(ip) = &ip {
        fields.push(("WARC-IP-Address", ip));
    }
    fields.extend([
        ("WARC-Block-Digest", req_digest.as_str()),
        ("Content-Type", "application/http;msgtype=request"),
    ]);
    members.extend(member(&fields, &[&req]));
    Captured {
        members,
        response_id,
        target: url.to_string(),
        date,
        hold: None,
    }
}

/// Add a rendered page's DOM (`crate::render`) to its captured response, as
/// a `conversion` record that refers to the response.
pub(crate) fn add_rendered(captured: &mut Captured, dom: &[u8]) {
    let id = record_id();
    let digest = sha1(&[dom]);
    captured.members.extend(member(
        &[
            ("WARC-Type", "conversion"),
            ("WARC-Record-ID", &id),
            ("WARC-Date", &captured.date),
            ("WARC-Target-URI", &captured.target),
            ("WARC-Refers-To", &captured.response_id),
            ("WARC-Block-Digest", &digest),
            ("Content-Type", "text/html; charset=utf-8"),
        ],
        &[dom],
    ));
}

/// The `metadata` member that goes with a captured response of a stored record.
pub fn metadata(captured: &Captured, prov: &Provenance) -> Vec<u8> {
    let fields = provenance_fields(prov);
    let id = record_id();
    let digest = sha1(&[fields.as_bytes()]);
    member(
        &[
            ("WARC-Type", "metadata"),
            ("WARC-Record-ID", &id),
            ("WARC-Date", &captured.date),
            ("WARC-Target-URI", &captured.target),
            ("WARC-Concurrent-To", &captured.response_id),
            ("WARC-Block-Digest", &digest),
            ("Content-Type", "application/warc-fields"),
        ],
        &[fields.as_bytes()],
    )
}

/// Appends record groups to one run's WARC file. The file (and its
/// `warcinfo` record) is created by the first group, so a run that archives
/// nothing leaves no file.
pub struct WarcWriter {
    path: PathBuf,
    name: String,
    run_id: String,
    file: Option<File>,
    /// Length up to the end of the last whole group.
    len: u64,
    /// Bytes written since the last sync.
    unsynced: bool,
}

impl WarcWriter {
    /// The writer for `dir/<run-id>.warc.gz` (`dir` is `data/warc`).
    pub fn new(dir: &Path, run_id: &str) -> WarcWriter {
        let name = format!("{run_id}.warc.gz");
        WarcWriter {
            path: dir.join(&name),
            name,
            run_id: run_id.to_string(),
            file: None,
            len: 0,
            unsynced: false,
        }
    }

    /// The file's name (what a record's `warc_file` says).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Append one group of members; returns the offset of its first member.
    /// On a failed write the file is cut back to its last whole group.
    pub fn append(&mut self, parts: &[&[u8]]) -> Result<u64, WarcError> {
        let err = |path: &Path, source| WarcError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut group = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            group.extend_from_slice(p);
        }
        if self.file.is_none() {
            return self.create(&group);
        }
        let Some(file) = self.file.as_mut() else {
            unreachable!("checked just above");
        };
        if let Err(e) = file.write_all(&group) {
            let _ = file.set_len(self.len);
            let _ = file.seek(SeekFrom::Start(self.len));
            return Err(err(&self.path, e));
        }
        let offset = self.len;
        self.len += group.len() as u64;
        self.unsynced = true;
        Ok(offset)
    }

    /// Create the file with its `warcinfo` record and the first group. Both
    /// are written to a hidden `.part` file that is renamed into place, so a
    /// run killed at any moment leaves either no file or one with a whole
    /// group (a killed run's `.part` is removed by the next writer).
    fn create(&mut self, group: &[u8]) -> Result<u64, WarcError> {
        let err = |path: &Path, source| WarcError::Write {
            path: path.to_path_buf(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| err(&self.path, e))?;
        remove_parts(dir);
        let part = dir.join(format!(".{}{PART}", self.name));
        let mut first = self.warcinfo();
        let info_len = first.len() as u64;
        first.extend_from_slice(group);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&part)
            .and_then(|mut f| f.write_all(&first).map(|()| f));
        let placed = written.and_then(|f| {
            if self.path.exists() {
                return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
            }
            std::fs::rename(&part, &self.path).map(|()| f)
        });
        match placed {
            Ok(f) => {
                self.file = Some(f);
                self.len = first.len() as u64;
                self.unsynced = true;
                Ok(info_len)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                Err(err(&self.path, e))
            }
        }
    }

    /// Make everything appended so far durable (before a shard frame that
    /// refers to it).
    pub fn sync(&mut self) -> Result<(), WarcError> {
        if let (Some(f), true) = (self.file.as_mut(), self.unsynced) {
            f.sync_data().map_err(|source| WarcError::Write {
                path: self.path.clone(),
                source,
            })?;
            self.unsynced = false;
        }
        Ok(())
    }

    /// The path of the file, when it was created.
    pub fn finish(mut self) -> Result<Option<PathBuf>, WarcError> {
        self.sync()?;
        Ok(self.file.is_some().then_some(self.path))
    }

    fn warcinfo(&self) -> Vec<u8> {
        let fields = format!(
            "software: {SOFTWARE}\r\nformat: WARC File Format 1.1\r\n\
             conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
             robots: obey\r\nisPartOf: {}\r\n",
            self.run_id
        );
        let id = record_id();
        let date = warc_date(chrono::Utc::now());
        member(
            &[
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", &id),
                ("WARC-Date", &date),
                ("WARC-Filename", &self.name),
                ("Content-Type", "application/warc-fields"),
            ],
            &[fields.as_bytes()],
        )
    }
}

/// One record read back.
#[derive(Debug, Clone)]
pub struct Record {
    /// Offset of its gzip member in the file.
    pub offset: u64,
    /// WARC header fields, in order.
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl Record {
    /// A WARC header's value (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The HTTP status, headers (names lower-cased) and payload of a
    /// `response` block; `None` when it is not an HTTP response.
    pub fn http(&self) -> Option<Http<'_>> {
        let end = memchr::memmem::find(&self.block, b"\r\n\r\n")?;
        let head = std::str::from_utf8(&self.block[..end]).ok()?;
        let mut lines = head.split("\r\n");
        let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Some(Http {
            status,
            headers,
            payload: &self.block[end + 4..],
        })
    }
}

/// An archived HTTP response, as [`Record::http`] reads it.
#[derive(Debug)]
pub struct Http<'a> {
    pub status: u16,
    /// Names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The body as received (still content-encoded).
    pub(crate) payload: &'a [u8],
}

impl Http<'_> {
    /// A header's first value (`name` lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What reading a WARC file found besides its records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcScan {
    pub records: u64,
    /// Bytes after the last whole record (a run killed mid-write).
    pub truncated_bytes: u64,
}

/// A reader that counts the bytes consumed from it.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// One gzip member at the reader's position as a record; `None` at the end
/// of the file or at a member that does not decode or parse (a torn tail).
fn next_record<R: BufRead>(r: &mut Counting<R>) -> Option<Record> {
    if r.fill_buf().ok()?.is_empty() {
        return None;
    }
    let offset = r.pos;
    let mut data = Vec::new();
    flate2::bufread::GzDecoder::new(&mut *r)
        .read_to_end(&mut data)
        .ok()?;
    parse_record(offset, data)
}

fn parse_record(offset: u64, data: Vec<u8>) -> Option<Record> {
    let end = memchr::memmem::find(&data, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&data[..end]).ok()?;
    let mut lines = head.split("\r\n");
    if !lines.next()?.starts_with("WARC/") {
        return None;
    }
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))?
        .1
        .parse()
        .ok()?;
    let start = end + 4;
    let block = data.get(start..start + len)?.to_vec();
    Some(Record {
        offset,
        headers,
        block,
    })
}

/// Call `on_record` with every whole record of a WARC file, in order, one
/// in memory at a time. A torn tail is counted, not an error.
pub fn read_records(path: &Path, mut on_record: impl FnMut(Record)) -> Result<WarcScan, WarcError> {
    let rerr = |source| WarcError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(rerr)?;
    let len = file.metadata().map_err(rerr)?.len();
    let mut r = Counting {
        inner: BufReader::with_capacity(256 << 10, file),
        pos: 0,
    };
    let mut scan = WarcScan::default();
    let mut good_end = 0;
    while let Some(rec) = next_record(&mut r) {
        good_end = r.pos;
        scan.records += 1;
        on_record(rec);
    }
    scan.truncated_bytes = len - good_end.min(len);
    Ok(scan)
}

/// The record whose gzip member starts at `offset` (a record's `warc_offset`).
pub fn read_at(path: &Path, offset: u64) -> Result<Option<Record>, WarcError> {
    let rerr = |source| WarcError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(rerr)?;
    file.seek(SeekFrom::Start(offset)).map_err(rerr)?;
    let mut r = Counting {
        inner: BufReader::new(file),
        pos: offset,
    };
    Ok(next_record(&mut r))
}

/// Suffix of a file still being created (never listed as a WARC file).
const PART: &str = ".part";

/// Remove what a killed writer left half made. The data folder's lock makes
/// this writer the only one.
fn remove_parts(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for p in rd.filter_map(|e| e.ok().map(|e| e.path())) {
        let stale = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.') && n.ends_with(PART));
        if stale {
            tracing::debug!(path = %p.display(), "removing a half-made WARC file");
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// All `*.warc.gz` files under `dir`, sorted by name (run ids sort by time).
pub fn list(dir: &Path) -> Result<Vec<PathBuf>, WarcError> {
    super::list_files(dir, ".warc.gz").map_err(|source| WarcError::Read {
        path: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(encoded: bool) -> Wire {
        Wire {
            date: chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
                .unwrap()
                .to_utc(),
            ip: Some("192.0.2.7".parse().unwrap()),
            version: "HTTP/1.1",
            status: 200,
            reason: "OK".into(),
            request_target: "/a?b=1".into(),
            request_headers: vec![("host".into(), b"ex.com".to_vec())],
            headers: vec![
                ("content-type".into(), b"text/html".to_vec()),
                ("transfer-encoding".into(), b"chunked".to_vec()),
            ],
            raw_body: if encoded {
                b"\x1f\x8b-raw".to_vec()
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn base32_matches_rfc_4648() {
        for (input, want) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), want, "{input}");
        }
        // sha1("abc") = a9993e36...; its base32 as WARC tools write it.
        assert_eq!(
            sha1(&[b"a", b"bc"]),
            "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"
        );
    }

    #[test]
    fn groups_round_trip_and_a_torn_tail_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::new(&dir.path().join("warc"), "r1");
        let c = capture("http://ex.com/a?b=1", &wire(false), b"<p>hello</p>");
        let prov = Provenance {
            id: 42,
            fetched_at: "2026-12-01T10:00:01Z".parse().unwrap(),
            run_id: Some("r1".into()),
            ai_signals: vec!["robots:ai-train=no".into()],
            ai_reserved: Some(false),
            extracted_on: "2026-12-01".parse().ok(),
            ..Provenance::default()
        };
        let meta = metadata(&c, &prov);
        let first = w.append(&[&c.members, &meta]).unwrap();
        let c2 = capture("http://ex.com/z", &wire(true), b"decoded");
        let second = w.append(&[&c2.members]).unwrap();
        assert!(first > 0 && second > first);
        let path = w.finish().unwrap().unwrap();
        let mut got = Vec::new();
        let scan = read_records(&path, |r| got.push(r)).unwrap();
        assert_eq!(
            scan,
            WarcScan {
                records: 6,
                truncated_bytes: 0
            }
        );
        let types: Vec<&str> = got.iter().map(|r| r.header("WARC-Type").unwrap()).collect();
        assert_eq!(
            types,
            [
                "warcinfo", "response", "request", "metadata", "response", "request"
            ]
        );
        let resp = &got[1];
        assert_eq!(resp.offset, first);
        let http = resp.http().unwrap();
        let payload = http.payload;
        assert_eq!((http.status, payload), (200, &b"<p>hello</p>"[..]));
        assert_eq!(http.header("x-crawler-transfer-encoding"), Some("chunked"));
        assert_eq!(
            resp.header("WARC-Payload-Digest").unwrap(),
            sha1(&[payload])
        );
        assert_eq!(resp.header("WARC-IP-Address"), Some("192.0.2.7"));
        assert_eq!(parse_provenance(&got[3].block), Some(prov));
        assert_eq!(
            got[3].header("WARC-Concurrent-To"),
            resp.header("WARC-Record-ID")
        );
        // The encoded body is stored raw.
        assert_eq!(got[4].http().unwrap().payload, b"\x1f\x8b-raw");
        assert_eq!(read_at(&path, second).unwrap().unwrap().offset, second);
        // A kill mid-write: the last member cut short.
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 10]).unwrap();
        let scan = read_records(&path, |_| {}).unwrap();
        assert_eq!(scan.records, 5);
        assert!(scan.truncated_bytes > 10);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_cut_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::new(dir.path(), "r");
        let c = capture("http://ex.com/a", &wire(false), b"x");
        w.append(&[&c.members]).unwrap();
        let real = w
            .file
            .replace(OpenOptions::new().write(true).open("/dev/full").unwrap());
        assert!(w.append(&[&c.members]).is_err());
        w.file = real;
        let at = w.append(&[&c.members]).unwrap();
        let path = w.finish().unwrap().unwrap();
        let scan = read_records(&path, |_| {}).unwrap();
        assert_eq!(
            scan,
            WarcScan {
                records: 5,
                truncated_bytes: 0
            }
        );
        assert_eq!(
            read_at(&path, at).unwrap().unwrap().header("WARC-Type"),
            Some("response")
        );
    }

    #[test]
    fn a_half_made_file_is_never_listed_and_is_cleared_by_the_next_writer() {
        let dir = tempfile::tempdir().unwrap();
        // What a run killed between creating its file and filling it leaves.
        let stale = dir.path().join(".old.warc.gz.part");
        std::fs::write(&stale, b"").unwrap();
        assert_eq!(list(dir.path()).unwrap(), Vec::<PathBuf>::new());
        let mut w = WarcWriter::new(dir.path(), "r");
        let c = capture("http://ex.com/a", &wire(false), b"x");
        let at = w.append(&[&c.members]).unwrap();
        assert!(!stale.exists(), "the stale part is removed");
        let path = w.finish().unwrap().unwrap();
        assert_eq!(list(dir.path()).unwrap(), vec![path.clone()]);
        let whole = read_records(&path, |_| {}).unwrap().records;
        assert!(whole >= 3, "warcinfo, request and response");
        assert!(at > 0, "the group follows the warcinfo record");
        // A second writer for the same run id does not overwrite the file.
        let mut again = WarcWriter::new(dir.path(), "r");
        assert!(again.append(&[&c.members]).is_err());
        assert_eq!(read_records(&path, |_| {}).unwrap().records, whole);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn record_ids_are_uuid_v4() {
        let a = record_id();
        assert_ne!(a, record_id());
        assert_eq!(a.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&a[24..25], "4");
    }
}
