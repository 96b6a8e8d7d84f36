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
//! and the part that matters is ~100 lines; xxh3 (already used for every other
//! key) hashes the words.
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

/// The signature of `text`, or `None` when it has no words.
pub fn signature(text: &str) -> Option<Signature> {
    let mut bins = [u32::MAX; HASHES];
    let mut window = [0u64; SHINGLE];
    let mut words = 0usize;
    let add = |bins: &mut [u32; HASHES], h: u64| {
        // The high half picks the bin (multiply-shift into 0..112), the low half is the value.
        let bin = (((h >> 32) * HASHES as u64) >> 32) as usize;
        let v = h as u32;
        if v < bins[bin] {
            bins[bin] = v;
        }
    };
    for_each_word(text, |w| {
        window[words % SHINGLE] = w;
        words += 1;
        if words >= SHINGLE {
            add(&mut bins, shingle(&window, words));
        }
    });
    if words == 0 {
        return None;
    }
    if words < SHINGLE {
        add(&mut bins, shingle(&window, words));
    }
    Some(densify(&bins))
}

/// The hash of the last `min(words, SHINGLE)` words in the ring `window`, in order.
fn shingle(window: &[u64; SHINGLE], words: usize) -> u64 {
    let n = words.min(SHINGLE);
    let mut h = 0u64;
    for k in 0..n {
        let w = window[(words - n + k) % SHINGLE];
        h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(w);
    }
    fmix64(h ^ n as u64)
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

/// Call `f` with the hash of each lowercased alphanumeric word of `text`, in order.
fn for_each_word(text: &str, mut f: impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let mut word: Vec<u8> = Vec::with_capacity(64);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            if b.is_ascii_alphanumeric() {
                word.push(b.to_ascii_lowercase());
            } else if !word.is_empty() {
                f(xxh3_64(&word));
                word.clear();
            }
            continue;
        }
        // `i` sits on a char boundary: it only ever advances by whole chars.
        let Some(ch) = text[i..].chars().next() else {
            break;
        };
        i += ch.len_utf8();
        if ch.is_alphanumeric() {
            let mut buf = [0u8; 4];
            for lower in ch.to_lowercase() {
                word.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            }
        } else if !word.is_empty() {
            f(xxh3_64(&word));
            word.clear();
        }
    }
    if !word.is_empty() {
        f(xxh3_64(&word));
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

    /// Exact Jaccard of two word-5-gram sets, for comparison.
    fn jaccard(a: &str, b: &str) -> f64 {
        let sh = |t: &str| {
            let w: Vec<String> = t
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            w.windows(SHINGLE)
                .map(|x| x.join(" "))
                .collect::<std::collections::HashSet<_>>()
        };
        let (x, y) = (sh(a), sh(b));
        x.intersection(&y).count() as f64 / x.union(&y).count() as f64
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
                jaccard(&a, &b),
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

    #[test]
    fn values_are_stable() {
        // Signatures decide what a build keeps: they must not change by accident
        // (a new hash, another bin rule), or two builds of one dataset could differ.
        let s =
            signature("Stable values across builds and machines, please: one two three.").unwrap();
        let bytes: Vec<u8> = s.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(format!("{:016x}", xxh3_64(&bytes)), "85198fd94713baa9");
    }
}
