//! Article ids that two runs cannot both hand out, with nothing shared
//! between them but the files in git.
//!
//! Every run reserves its own blocks of ids, computed from the run itself:
//!
//! ```text
//!  bit 63   62 ........ 33   32 ..... 26   25 ........ 10   9 ..... 0
//!   0      second (30 bits)  partition (7)  run suffix (16)  seq (10)
//! ```
//!
//! * `second`: seconds since 2026-01-01T00:00:00Z of the block's start: the
//!   run's start second (the one in its run id) for the first block;
//! * `partition`: the runner's partition index (`--partition i/N`);
//! * `run suffix`: the 16 random bits at the end of the run id;
//! * `seq`: 1,024 ids per block. A run that needs more opens another block at
//!   the current second, always later than its previous block's. (Such a
//!   block can meet another run's only if that run has the same partition and
//!   run suffix, and starts, or opens a block, in that very second: a 1 in
//!   65,536 chance on top of the coincidence in time.)
//!
//! So two runs hand out the same id only if they share a block: the same
//! partition, the same start second and the same run suffix, that is the same
//! run id (and then their shards and seen segments have the same file names,
//! which git refuses to merge loudly rather than keep both). Runs of
//! different partitions never share a block, whenever they start.
//!
//! Ids stay `i64`, positive and below 2^63 (until 2060, when the second
//! field runs out); they are never reused (a crashed run's block dies with
//! it: the next run has another start) and never change once published.
//! The legacy numbering (`crawl.first_id`, an old `state/next_id`) lives below
//! [`LEGACY_LIMIT`] = 2^33: every block id is above every legacy id, so ids
//! still grow with time across the switch, and `scraper renumber` keeps
//! working on old data. Ids are no longer dense: a run of 40 articles uses
//! 40 ids of a block of 1,024.
//!
//! Limits: at most 128 partitions; a clock before 2026 is refused. A laptop
//! run and an Action run of one partition on one day have different start
//! seconds or suffixes, so distinct ids without renumbering (tested in
//! `tests/it/automation/partition_daily.rs`); `scripts/daily.sh` never calls
//! `scraper renumber`, which stays for data from older versions.

use chrono::{DateTime, Utc};

use super::StoreError;
use crate::partition::Partition;

/// Legacy (counter) ids are below this; block ids are at or above it.
pub const LEGACY_LIMIT: i64 = 1 << 33;
/// Is `first_id` (`crawl.first_id`, where `renumber` continues the legacy
/// numbering) a legacy id? Ids at or above [`LEGACY_LIMIT`] are run blocks.
pub(crate) fn check_first_id(first_id: i64) -> Result<(), String> {
    if (0..LEGACY_LIMIT).contains(&first_id) {
        return Ok(());
    }
    Err(format!(
        "expected a number from 0 to {} (ids above are run blocks), got {first_id}",
        LEGACY_LIMIT - 1
    ))
}

/// 2026-01-01T00:00:00Z, second 0 of the block layout.
pub(crate) const EPOCH: i64 = 1_767_225_600;

const SEQ_BITS: u32 = 10;
const SUFFIX_BITS: u32 = 16;
const PART_BITS: u32 = 7;
const TIME_BITS: u32 = 30;
const PER_BLOCK: i64 = 1 << SEQ_BITS;

/// The ids one run hands out.
#[derive(Debug, Clone)]
pub struct IdBlocks {
    partition: u32,
    suffix: u16,
    /// Second (since [`EPOCH`]) of the current block.
    second: i64,
    /// Next sequence number in the current block.
    seq: i64,
    /// `[first, next)` of every block opened so far.
    blocks: Vec<[i64; 2]>,
}

impl IdBlocks {
    /// The blocks of the run `run_id` (`YYYYMMDDTHHMMSSZ-xxxx`) started at
    /// `started` in `partition`. No block is opened before the first id.
    pub fn new(
        started: DateTime<Utc>,
        run_id: &str,
        partition: Partition,
    ) -> Result<IdBlocks, StoreError> {
        let bad = |message: String| StoreError::Corrupt {
            path: "state".into(),
            message,
        };
        let suffix = run_id
            .rsplit_once('-')
            .and_then(|(_, s)| u16::from_str_radix(s, 16).ok())
            .ok_or_else(|| bad(format!("run id {run_id:?} has no 16-bit hex suffix")))?;
        let second = second_of(started).ok_or_else(|| {
            bad(format!(
                "the clock says {started}: article ids need a time between 2026-01-01 and 2060-01-10"
            ))
        })?;
        debug_assert!(partition.index() < (1 << PART_BITS));
        Ok(IdBlocks {
            partition: partition.index(),
            suffix,
            second,
            seq: PER_BLOCK,
            blocks: Vec::new(),
        })
    }

    /// Hand out the next id; opens a block when none is open or the current one is full.
    pub fn next_id(&mut self) -> i64 {
        if self.seq >= PER_BLOCK {
            if !self.blocks.is_empty() {
                let now = second_of(Utc::now()).unwrap_or(0);
                self.second = now.max(self.second + 1);
            }
            self.seq = 0;
            let base = self.base();
            self.blocks.push([base, base]);
        }
        let id = self.base() + self.seq;
        self.seq += 1;
        if let Some(last) = self.blocks.last_mut() {
            last[1] = id + 1;
        }
        id
    }

    fn base(&self) -> i64 {
        (self.second << (PART_BITS + SUFFIX_BITS + SEQ_BITS))
            | (i64::from(self.partition) << (SUFFIX_BITS + SEQ_BITS))
            | (i64::from(self.suffix) << SEQ_BITS)
    }

    /// `[first, next)` of each block used, in order.
    pub fn blocks(&self) -> &[[i64; 2]] {
        &self.blocks
    }

    /// Ids handed out.
    pub fn issued(&self) -> u64 {
        self.blocks.iter().map(|[a, b]| (b - a) as u64).sum()
    }
}

/// Seconds since [`EPOCH`], if the layout can hold them (at least 1, so block ids are never legacy ones).
fn second_of(t: DateTime<Utc>) -> Option<i64> {
    let s = t.timestamp() - EPOCH;
    (1..(1i64 << TIME_BITS)).contains(&s).then_some(s)
}

/// The block layout of an id, for messages and tests: `(second, partition, suffix, seq)`;
/// `None` for a legacy id.
pub fn decode(id: i64) -> Option<(i64, u32, u16, u32)> {
    (id >= LEGACY_LIMIT).then_some((
        id >> (PART_BITS + SUFFIX_BITS + SEQ_BITS),
        ((id >> (SUFFIX_BITS + SEQ_BITS)) & ((1 << PART_BITS) - 1)) as u32,
        ((id >> SEQ_BITS) & ((1 << SUFFIX_BITS) - 1)) as u16,
        (id & (PER_BLOCK - 1)) as u32,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn p(s: &str) -> Partition {
        s.parse().unwrap()
    }

    #[test]
    fn layout_round_trips_and_stays_above_legacy() {
        let t = at("2026-12-01T06:37:00Z");
        let mut b = IdBlocks::new(t, "20261201T063700Z-beef", p("3/4")).unwrap();
        let first = b.next_id();
        let second = b.next_id();
        assert_eq!(second, first + 1);
        assert!(first >= LEGACY_LIMIT);
        assert_eq!(decode(first), Some((t.timestamp() - EPOCH, 3, 0xbeef, 0)));
        assert_eq!(decode(second).unwrap().3, 1);
        assert_eq!(decode(17_159), None);
        assert_eq!(b.blocks(), &[[first, first + 2]]);
        assert_eq!(b.issued(), 2);
        // The latest second the layout holds still fits a positive i64.
        let last = at("2060-01-09T00:00:00Z");
        let mut b = IdBlocks::new(last, "x-ffff", p("127/128")).unwrap();
        assert!(b.next_id() > 0);
        assert!(IdBlocks::new(at("2025-06-01T00:00:00Z"), "x-0001", p("0/1")).is_err());
        assert!(IdBlocks::new(t, "no-suffix-here", p("0/1")).is_err());
    }

    #[test]
    fn runs_from_the_same_state_never_share_ids() {
        let t = at("2026-12-01T06:37:00Z");
        let ids = |start: DateTime<Utc>, run: &str, part: &str, n: usize| {
            let mut b = IdBlocks::new(start, run, p(part)).unwrap();
            (0..n).map(|_| b.next_id()).collect::<Vec<_>>()
        };
        // Four partitions in the same second with the same suffix; a laptop
        // and an Action run of one partition in the same second (suffixes
        // differ) and a minute apart (suffixes equal, one block each: two
        // runs with equal suffixes that both open a second block in the
        // same second would share it, see the module doc).
        let sets = [
            ids(t, "a-1234", "0/4", 3000),
            ids(t, "a-1234", "1/4", 3000),
            ids(t, "a-1234", "2/4", 3000),
            ids(t, "a-1234", "3/4", 3000),
            ids(t, "a-1235", "0/4", 3000),
            ids(t + chrono::Duration::minutes(1), "a-1234", "0/4", 1000),
        ];
        let mut all: Vec<i64> = sets.iter().flatten().copied().collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an id was handed out twice");
    }

    #[test]
    fn a_full_block_opens_a_later_one() {
        let t = at("2026-12-01T06:37:00Z");
        let mut b = IdBlocks::new(t, "r-0007", p("1/2")).unwrap();
        let ids: Vec<i64> = (0..2500).map(|_| b.next_id()).collect();
        assert_eq!(b.blocks().len(), 3);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids grow within a run");
        let seconds: Vec<i64> = b
            .blocks()
            .iter()
            .map(|[a, _]| decode(*a).unwrap().0)
            .collect();
        assert!(seconds.windows(2).all(|w| w[0] < w[1]), "{seconds:?}");
        assert_eq!(b.issued(), 2500);
    }
}
