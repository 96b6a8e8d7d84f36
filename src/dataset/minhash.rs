//! MinHash signatures of a text's word 5-grams, for near-duplicate removal.
//! Pure functions, written here on `xxhash-rust` (see below for why).
//!
//! Parameters (those of datatrove, the FineWeb pipeline): word 5-grams
//! ([`SHINGLE`]), [`HASHES`] = 112 values cut into [`BANDS`] = 14 bands of
//! [`ROWS`] = 8 for locality-sensitive hashing. Two texts with Jaccard
//! similarity `J` share at least one band with probability `1 - (1 - J^8)^14`:
//! 0.77 at J = 0.75, 0.92 at 0.8, 0.99 at 0.85, 0.0005 at 0.3. A pair that
//! shares a band is then checked against the whole signature: it is a near
//! duplicate when the estimated Jaccard ([`similarity`]) is at least
//! [`THRESHOLD`].
//!
//! Normalisation: words are runs of alphanumeric characters
//! (`char::is_alphanumeric`), lowercased; punctuation, white space and markup
//! between them do not count. A text of fewer than five words is one shingle.
//!
//! The 112 values come from one hash per shingle, not 112 ("one permutation
//! hashing" with optimal densification, Shrivastava 2017): each shingle's
//! 64-bit hash picks one of 112 bins and the bin keeps its smallest value;
//! an empty bin (a short text) copies the value of a non-empty bin picked by a
//! fixed probe sequence, so two texts fill it alike. That costs one hash per
//! shingle instead of 112, which is what keeps the build's time near what it
//! was; for LSH it is as good as 112 independent permutations. No crate on
//! crates.io does this with stable, documented values and few dependencies,
//! and the part that matters is ~200 lines; xxh3 (already used for every other
//! key) hashes the rare words longer than 16 bytes.
//!
//! Speed (this is most of the build's first pass): each word is hashed once,
//! a word of up to 16 bytes (nearly all) by one folded multiply of its two
//! lowercased 8-byte lanes, without the length branches of a general hash;
//! the shingle hash is a polynomial over the word hashes that rolls along the
//! text (one word in, one out) instead of being recomputed; words are found
//! 64 bytes at a time, from a bit mask of word bytes (made eight bytes at a
//! time) and the bits where runs start and end. Tests check all of it
//! against a plain char-by-char reading.
//!
//! Each bin keeps the low 16 bits of its minimum (`b`-bit MinHash): 224 bytes
//! per record. Two different minima agree on 16 bits with probability 1/65,536,
//! which moves an estimate by less than 0.0001.

use xxhash_rust::xxh3::xxh3_64;

/// Words per shingle.
pub const SHINGLE: usize = 5;
/// LSH bands.
pub const BANDS: usize = 14;
/// Values per band.
pub const ROWS: usize = 8;
/// Values in a signature.
pub const HASHES: usize = BANDS * ROWS;
/// Estimated Jaccard similarity at or above which a candidate pair is a near duplicate.
pub const THRESHOLD: f64 = 0.75;

/// A text's MinHash signature.
pub type Signature = [u16; HASHES];

/// Multiplier of the shingle hash: a shingle of words `w1..wn` (hashes) is
/// `fmix64((w1·K^(n-1) + ... + wn) ^ n)`, all mod 2^64.
const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// `K^(SHINGLE-1)`: what the word leaving a full window weighs.
const K_OUT: u64 = {
    let mut p = 1u64;
    let mut i = 1;
    while i < SHINGLE {
        p = p.wrapping_mul(K);
        i += 1;
    }
    p
};

/// The signature of `text`, or `None` when it has no words.
pub fn signature(text: &str) -> Option<Signature> {
    let mut bins = [u32::MAX; HASHES];
    // The last `SHINGLE` word hashes (zeros before the text has that many),
    // `slot` the one the next word replaces, and the polynomial over them,
    // updated as the window rolls on (one word in, one out).
    let mut window = [0u64; SHINGLE];
    let mut slot = 0usize;
    let mut poly = 0u64;
    let mut words = 0usize;
    for_each_word(text, |w| {
        let out = std::mem::replace(&mut window[slot], w);
        slot = if slot + 1 == SHINGLE { 0 } else { slot + 1 };
        poly = poly
            .wrapping_sub(out.wrapping_mul(K_OUT))
            .wrapping_mul(K)
            .wrapping_add(w);
        words += 1;
        if words >= SHINGLE {
            add(&mut bins, fmix64(poly ^ SHINGLE as u64));
        }
    });
    if words == 0 {
        return None;
    }
    if words < SHINGLE {
        // One shingle of all the words.
        add(&mut bins, fmix64(poly ^ words as u64));
    }
    Some(densify(&bins))
}

/// Put a shingle's hash in its bin: the high half picks the bin
/// (multiply-shift into `0..HASHES`), the low half is the value; the bin keeps its minimum.
#[inline(always)]
fn add(bins: &mut [u32; HASHES], h: u64) {
    let bin = (((h >> 32) * HASHES as u64) >> 32) as usize;
    // Without a branch: whether a bin takes a new minimum is a coin toss early
    // in a text, which a branch predictor cannot guess.
    bins[bin] = bins[bin].min(h as u32);
}

/// The hash of one lowercased word: words of up to 16 bytes (nearly all)
/// by [`mix16`] of their bytes, zero-padded, longer ones by xxh3.
fn word_hash(word: &[u8]) -> u64 {
    if word.len() <= 16 {
        let mut buf = [0u8; 16];
        buf[..word.len()].copy_from_slice(word);
        let (lo, hi) = buf.split_at(8);
        let lane = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        mix16(lane(lo), lane(hi), word.len())
    } else {
        xxh3_64(word)
    }
}

/// A word of up to 16 bytes, as two zero-padded little-endian lanes and its
/// length, hashed without a branch (xxh3 branches on the length, which a
/// branch predictor cannot guess word after word): one 64 x 64 -> 128-bit
/// multiply with its halves folded, the mixing step of wyhash. Every byte of
/// the two keys has its high bit set, so for ASCII lanes neither factor is zero.
#[inline(always)]
fn mix16(lo: u64, hi: u64, len: usize) -> u64 {
    const KEY_LO: u64 = 0xa076_1d64_78bd_642f | HIGH;
    const KEY_HI: u64 = 0xe703_7ed1_a0b4_28db | HIGH;
    let p = u128::from(lo ^ KEY_LO) * u128::from(hi ^ KEY_HI ^ ((len as u64) << 48));
    (p as u64) ^ ((p >> 64) as u64)
}

/// MurmurHash3's 64-bit finaliser: every input bit moves every output bit.
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Fill empty bins (still `u32::MAX`) from non-empty ones: bin `i` tries bins
/// `probe(i, 1)`, `probe(i, 2)`, ... until one was filled by a shingle. The
/// probe sequence is the same for every text. Keeps the low 16 bits.
fn densify(bins: &[u32; HASHES]) -> Signature {
    let mut out = [0u16; HASHES];
    for (i, o) in out.iter_mut().enumerate() {
        let mut v = bins[i];
        let mut attempt = 1u64;
        while v == u32::MAX {
            let j = fmix64(((i as u64) << 32) | attempt) % HASHES as u64;
            v = bins[j as usize];
            attempt += 1;
        }
        *o = v as u16;
    }
    out
}

/// Eight bytes per `u64` lane, for the byte-parallel (SWAR) tests below.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
/// The bit that makes an ASCII capital lowercase, in every byte.
const CASE: u64 = ONES * 0x20;

/// Per byte of `x` (all below 0x80): the high bit set when the byte is at least `c` (1..=0x80).
#[inline(always)]
fn at_least(x: u64, c: u8) -> u64 {
    // No carries between bytes: each is below 0x80 and 0x80 - c is at most 0x7f.
    x.wrapping_add(ONES * u64::from(0x80 - c)) & HIGH
}

/// Per byte of `w`: the high bit set when the byte may be part of a word: an
/// ASCII letter or digit, or any byte of a non-ASCII char.
#[inline(always)]
fn word_bytes(w: u64) -> u64 {
    let x = w & !HIGH;
    let digit = at_least(x, b'0') & !at_least(x, b'9' + 1);
    let folded = x | CASE;
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    (w & HIGH) | digit | letter
}

/// The high bits of the eight bytes of `m` (each 0x80 or 0) as one byte, byte `i` to bit `i`.
#[inline(always)]
fn pack(m: u64) -> u64 {
    // Each flag, moved to bit 8i, is multiplied up to bit 56 + i; no two
    // partial products meet, so nothing carries into the top byte.
    ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// One bit per byte of a block of 64 bytes (byte `i` to bit `i`): set where
/// [`word_bytes`] holds.
#[inline(always)]
fn mask64(block: &[u8; 64]) -> u64 {
    let mut m = 0u64;
    for (k, eight) in block.chunks_exact(8).enumerate() {
        let lane = u64::from_le_bytes(eight.try_into().unwrap_or([0; 8]));
        m |= pack(word_bytes(lane)) << (8 * k);
    }
    m
}

/// Call `f` with the hash ([`word_hash`]) of each word of `text`, lowercased, in order.
///
/// A word is a maximal run of alphanumeric chars. The text is read in blocks
/// of 64 bytes: a bit mask of the bytes that may belong to a word (made eight
/// bytes at a time) gives, with one shift, the bits where runs start and
/// where they end, which are then taken lowest first (a run still open at the
/// end of a block ends in a later one). Each run goes to [`run_words`].
fn for_each_word(text: &str, mut f: impl FnMut(u64)) {
    let bytes = text.as_bytes();
    // Most texts are plain ASCII: then no run needs checking for other chars.
    let ascii = bytes.is_ascii();
    let mut long: Vec<u8> = Vec::new();
    // Where the run still open at the end of the last block started.
    let mut open: Option<usize> = None;
    for (k, chunk) in bytes.chunks(64).enumerate() {
        let m = match <&[u8; 64]>::try_from(chunk) {
            Ok(block) => mask64(block),
            Err(_) => {
                // The last, short block: zero bytes are not word bytes.
                let mut block = [0u8; 64];
                block[..chunk.len()].copy_from_slice(chunk);
                mask64(&block)
            }
        };
        let base = k * 64;
        // Bit i: byte i - 1 is a word byte (for i = 0, the run left open).
        let before = (m << 1) | u64::from(open.is_some());
        let mut starts = m & !before;
        let mut ends = !m & before;
        if let Some(start) = open {
            if ends == 0 {
                continue;
            }
            let end = base + ends.trailing_zeros() as usize;
            ends &= ends - 1;
            open = None;
            run_words(text, ascii, start..end, &mut long, &mut f);
        }
        while starts != 0 {
            let start = base + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            if ends == 0 {
                open = Some(start);
                break;
            }
            let end = base + ends.trailing_zeros() as usize;
            ends &= ends - 1;
            run_words(text, ascii, start..end, &mut long, &mut f);
        }
    }
    if let Some(start) = open {
        run_words(text, ascii, start..bytes.len(), &mut long, &mut f);
    }
}

/// The words of one run of word bytes: a run of up to 16 ASCII bytes (most
/// words) is lowercased eight bytes at a time and hashed by [`mix16`]; a
/// longer ASCII one byte by byte; a run holding a non-ASCII char is read char
/// by char (it may hold several words, or none). `ascii`: the whole text is.
#[inline(always)]
fn run_words(
    text: &str,
    ascii: bool,
    run: std::ops::Range<usize>,
    long: &mut Vec<u8>,
    f: &mut impl FnMut(u64),
) {
    let bytes = text.as_bytes();
    let len = run.len();
    if let Some(sixteen) = bytes.get(run.start..run.start + 16)
        && len <= 16
    {
        let lane = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let (lo, hi) = (lane(&sixteen[..8]), lane(&sixteen[8..]));
        // Only the run's own bytes count: the low `len` bytes of `lo`, `hi`.
        let keep_lo = u64::MAX >> (8 * (8 - len.min(8)));
        let keep_hi = u64::MAX
            .checked_shr(8 * (16 - len.max(8)) as u32)
            .unwrap_or(0);
        if ascii || ((lo & keep_lo) | (hi & keep_hi)) & HIGH == 0 {
            // The run's bytes are ASCII letters and digits only: setting bit
            // 0x20 lowercases a capital and leaves the others as they are.
            f(mix16((lo | CASE) & keep_lo, (hi | CASE) & keep_hi, len));
            return;
        }
    }
    let word = &bytes[run.clone()];
    if word.is_ascii() {
        long.clear();
        long.extend(word.iter().map(u8::to_ascii_lowercase));
        f(word_hash(long));
        return;
    }
    // Runs start and end next to ASCII bytes (or the text's ends): char boundaries.
    for_each_word_in_run(&text[run], long, f);
}

/// The words of a run of non-separator ASCII bytes and non-ASCII chars: its
/// non-alphanumeric chars split it.
fn for_each_word_in_run(run: &str, word: &mut Vec<u8>, f: &mut impl FnMut(u64)) {
    word.clear();
    let mut buf = [0u8; 4];
    for ch in run.chars().chain(std::iter::once(' ')) {
        if ch.is_alphanumeric() {
            for lower in ch.to_lowercase() {
                word.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            }
        } else if !word.is_empty() {
            f(word_hash(word));
            word.clear();
        }
    }
}

/// The estimated Jaccard similarity of the texts behind two signatures: the
/// share of positions where they agree.
pub fn similarity(a: &Signature, b: &Signature) -> f64 {
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    same as f64 / HASHES as f64
}

/// The hash of band `band` (`0..BANDS`) of a signature.
pub fn band_key(sig: &Signature, band: usize) -> u64 {
    let mut bytes = [0u8; ROWS * 2 + 1];
    for (k, v) in sig[band * ROWS..(band + 1) * ROWS].iter().enumerate() {
        bytes[2 * k..2 * k + 2].copy_from_slice(&v.to_le_bytes());
    }
    bytes[ROWS * 2] = band as u8;
    xxh3_64(&bytes)
}

/// The exact Jaccard similarity of the word-5-gram sets of `a` and `b`
/// (words as a plain char-by-char reading finds them): what [`similarity`]
/// estimates, for checking the estimate. Slow; not used by the build.
pub fn exact_jaccard(a: &str, b: &str) -> f64 {
    let shingles = |t: &str| {
        let w: Vec<String> = t
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        w.windows(SHINGLE)
            .map(|x| x.join(" "))
            .collect::<std::collections::HashSet<_>>()
    };
    let (x, y) = (shingles(a), shingles(b));
    x.intersection(&y).count() as f64 / x.union(&y).count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text of `n` distinct made-up words, starting at word `from`.
    fn words(from: usize, n: usize) -> String {
        (from..from + n)
            .map(|i| format!("w{i}x"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn normalisation_ignores_case_punctuation_and_space() {
        let a = signature("The Model, said: \"it's   Ready\" — Über-fast!\nNext line.");
        let b = signature("the model said it s ready über fast next line");
        assert_eq!(a, b);
        assert_ne!(
            a,
            signature("the model said it s ready über fast next lines")
        );
        assert_eq!(signature(" ,.;\n"), None);
        // Short texts still get a signature, and the same one for the same words.
        assert_eq!(signature("two words"), signature("Two  WORDS."));
        assert_ne!(signature("two words"), signature("words two"));
    }

    #[test]
    fn estimates_follow_the_jaccard_similarity() {
        // Overlapping windows of one word sequence: known Jaccard values.
        for (shift, n) in [(0, 600), (30, 600), (100, 600), (200, 800), (500, 600)] {
            let a = words(0, n);
            let b = words(shift, n);
            let (want, got) = (
                exact_jaccard(&a, &b),
                similarity(&signature(&a).unwrap(), &signature(&b).unwrap()),
            );
            assert!((want - got).abs() < 0.12, "shift {shift}: {want} vs {got}");
        }
        let (a, b) = (words(0, 40), words(1000, 40));
        assert!(similarity(&signature(&a).unwrap(), &signature(&b).unwrap()) < 0.1);
    }

    #[test]
    fn identical_bands_for_identical_texts_only() {
        let a = signature(&words(0, 500)).unwrap();
        let b = signature(&words(5000, 500)).unwrap();
        for band in 0..BANDS {
            assert_eq!(band_key(&a, band), band_key(&a.clone(), band));
            assert_ne!(band_key(&a, band), band_key(&b, band));
        }
        assert_ne!(band_key(&a, 0), band_key(&a, 1));
    }

    /// The word hashing [`for_each_word`] must match: plainly, char by char.
    fn reference_words(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        let mut word = String::new();
        for ch in text.chars().chain(std::iter::once(' ')) {
            if ch.is_alphanumeric() {
                word.extend(ch.to_lowercase());
            } else if !word.is_empty() {
                out.push(word_hash(word.as_bytes()));
                word.clear();
            }
        }
        out
    }

    #[test]
    fn word_hashes_match_a_plain_reading() {
        let mut rand = crate::xorshift::XorShift32::new(0x2545_f491);
        let mut next = |n: usize| rand.below(n);
        let pieces = [
            "a", "Z", "9", " ", "  ", ".", "-", "\n", "É", "ß", "İ", "ǅ", "\u{2003}", "—", "日本",
            "٣", "\u{301}", "q", "Word", "UPPER", "@", "[", "`", "{", "/", ":", "\u{7f}", "\u{1}",
            "\u{10}", "Z9", "0",
        ];
        for round in 0..3000 {
            let mut t = String::new();
            for _ in 0..next(60) {
                t.push_str(pieces[next(pieces.len())]);
            }
            if round % 100 == 0 {
                // Words longer than the stack buffer, with and without capitals.
                t.push_str(&"aB".repeat(40 + round / 100));
                t.push(' ');
                t.push_str(&"xy".repeat(50));
                t.push('Ü');
            }
            let mut got = Vec::new();
            for_each_word(&t, |h| got.push(h));
            assert_eq!(got, reference_words(&t), "{t:?}");
        }
    }

    #[test]
    fn words_across_block_edges_match_a_plain_reading() {
        // Runs that end just before, at and after each 64-byte block edge,
        // runs longer than a block, and texts that end inside a run.
        for lead in 0..70 {
            for word in [1, 2, 15, 16, 17, 63, 64, 65, 130] {
                let t = format!(
                    "{}{} tail",
                    " ".repeat(lead),
                    "Ab".repeat(word).get(..word).unwrap_or("")
                );
                let mut got = Vec::new();
                for_each_word(&t, |h| got.push(h));
                assert_eq!(got, reference_words(&t), "{t:?}");
                let cut = &t[..t.len() - 5];
                got.clear();
                for_each_word(cut, |h| got.push(h));
                assert_eq!(got, reference_words(cut), "{cut:?}");
            }
        }
    }

    /// [`signature`] as first written: the shingle hash recomputed from the
    /// window for every word, over [`reference_words`].
    fn reference_signature(text: &str) -> Option<Signature> {
        let words = reference_words(text);
        if words.is_empty() {
            return None;
        }
        let shingle = |ws: &[u64]| {
            let h = ws
                .iter()
                .fold(0u64, |h, &w| h.wrapping_mul(K).wrapping_add(w));
            fmix64(h ^ ws.len() as u64)
        };
        let mut bins = [u32::MAX; HASHES];
        if words.len() < SHINGLE {
            add(&mut bins, shingle(&words));
        }
        for ws in words.windows(SHINGLE) {
            add(&mut bins, shingle(ws));
        }
        Some(densify(&bins))
    }

    #[test]
    fn rolling_signatures_match_the_reference() {
        let mut rand = crate::xorshift::XorShift32::new(0x9e37_79b9);
        let mut next = |n: usize| rand.below(n);
        let vocab = [
            "The", "model", "ÉTÉ", "gpu", "7", "data", "ß", "—", ",", "\n",
        ];
        for len in (0..12).chain([40, 300, 2000]) {
            for _ in 0..20 {
                let t: Vec<&str> = (0..len).map(|_| vocab[next(vocab.len())]).collect();
                let t = t.join(" ");
                assert_eq!(signature(&t), reference_signature(&t), "{t:?}");
            }
        }
    }

    #[test]
    fn values_are_stable() {
        // Signatures decide what a build keeps: they must not change by accident
        // (a new hash, another bin rule), or two builds of one dataset could differ.
        let s =
            signature("Stable values across builds and machines, please: one two three.").unwrap();
        let bytes: Vec<u8> = s.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(format!("{:016x}", xxh3_64(&bytes)), "021c0ac5cd6be065");
    }
}
