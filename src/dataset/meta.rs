//! What pass 1 keeps of one good line ([`Meta`], under 100 bytes), shared by
//! the scan that makes it, the spill that stores it and the passes that read
//! it (a leaf: it imports no other file of the build).

/// [`Meta::score`] when the build computed none.
pub const NO_SCORE: u16 = u16::MAX;

/// What pass 1 keeps of one good line.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub id: i64,
    /// Index into the global frame table (shard order, then file order).
    pub frame: u32,
    /// Index of the line among the frame's non-empty lines.
    pub line: u32,
    pub url_key: u64,
    /// The canonical-URL key when it differs from `url_key` (`NonZero`: 8 bytes, not 16).
    pub canonical_key: Option<std::num::NonZeroU64>,
    /// `scan::text_key` of the text, 0 for a text without words (a hash is 0
    /// with probability 2^-128; no `Option`, which would cost 16 bytes here).
    pub text_key: u128,
    pub relevant: bool,
    /// The relevance score under the build's rule, in thousandths;
    /// [`NO_SCORE`] when the filter is off (the record's own score is kept).
    pub score: u16,
    /// Index of the text's MinHash signature in `Scan::sigs`, or
    /// `near::NONE` (no words, or rejected by the relevance rule).
    pub sig: u32,
    /// A new version of an earlier record of the same URL (`updated`).
    pub updated: bool,
    /// The code part of the record's `extractor_version` (0: none), for
    /// picking the newest extraction of an id.
    pub version: u16,
    /// Why `scraper reextract` withdrew the record ([`Withdrawn`]), 0 if it did not.
    pub withdrawn: u8,
}

/// [`Meta::withdrawn`]'s values.
pub struct Withdrawn;

impl Withdrawn {
    pub const NOT_ARTICLE: u8 = 1;
    pub const NOT_RELEVANT: u8 = 2;
    pub const PAYWALLED: u8 = 3;

    pub(super) fn of(r: Option<crate::record::Rejection>) -> u8 {
        use crate::record::Rejection;
        match r {
            None => 0,
            Some(Rejection::NotRelevant) => Withdrawn::NOT_RELEVANT,
            Some(Rejection::Paywalled) => Withdrawn::PAYWALLED,
            Some(_) => Withdrawn::NOT_ARTICLE,
        }
    }
}

impl Meta {
    /// The score the build computed, if it computed one.
    pub fn score(&self) -> Option<f64> {
        (self.score != NO_SCORE).then(|| f64::from(self.score) / 1000.0)
    }
}
