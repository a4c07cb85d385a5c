//! Bytes eight at a time: the searches of short texts (the cells of a CSV line, the keys and
//! strings of a JSON line), where a SIMD search's setup costs more than the text, and a byte at
//! a time costs a comparison and a branch for every byte. Each test is exact: it marks the
//! bytes it looks for and no other, whatever their neighbours.

/// Every byte of a word holds `byte`.
pub const fn splat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

const LOW7: u64 = splat(0x7f);

/// The high bit of each byte of `word` that is zero, and no other bit. A byte's low seven bits
/// plus 0x7F carry into its high bit unless they are all zero, and never into the next byte.
#[inline]
pub fn zero_bytes(word: u64) -> u64 {
    !(((word & LOW7) + LOW7) | word | LOW7)
}

/// The high bit of each byte of `word` that is below 0x20 (a control character), and no other
/// bit: its low seven bits plus 0x60 reach the high bit from 0x20 on.
#[inline]
pub fn control_bytes(word: u64) -> u64 {
    !(((word & LOW7) + splat(0x60)) | word | LOW7)
}

/// The words of `bytes`, little-endian (the first byte is the lowest), each with the offset of
/// its first byte, and the bytes after the last whole word.
pub fn words(bytes: &[u8]) -> (impl Iterator<Item = (usize, u64)> + '_, &[u8], usize) {
    let chunks = bytes.chunks_exact(8);
    let rest = chunks.remainder();
    let whole = bytes.len() - rest.len();
    let words = chunks.enumerate().map(|(i, word)| {
        (
            i * 8,
            u64::from_le_bytes(word.try_into().unwrap_or_default()),
        )
    });
    (words, rest, whole)
}

/// The offset in its word of the first byte that `marks` (a mask of high bits) marks.
#[inline]
pub fn first_marked(marks: u64) -> usize {
    marks.trailing_zeros() as usize / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_marks_exactly_its_bytes_whatever_the_neighbours() {
        // Every pair of bytes side by side, in every position of a word.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for at in 0..7 {
                    let mut bytes = [b'x'; 8];
                    bytes[at] = a;
                    bytes[at + 1] = b;
                    let word = u64::from_le_bytes(bytes);
                    for (i, &byte) in bytes.iter().enumerate() {
                        let bit = 0x80u64 << (8 * i);
                        assert_eq!(zero_bytes(word) & bit != 0, byte == 0, "{bytes:?} {i}");
                        assert_eq!(control_bytes(word) & bit != 0, byte < 0x20, "{bytes:?} {i}");
                    }
                    assert_eq!(zero_bytes(word) & !splat(0x80), 0);
                    assert_eq!(control_bytes(word) & !splat(0x80), 0);
                }
            }
        }
    }
}
