//! Gzip for the files of a site bundle (`lightembed site`): the writer stores the index core,
//! term shards, text chunks, model and wasm pre-compressed, so a host that does not compress
//! (many static hosts send unknown `.bin` types as they are) still sends few bytes; every reader
//! takes a file either way, told apart by the gzip magic `1f 8b` (no raw bundle file starts with
//! it: fragments start with `LEFI`, a model with `LEMB`, wasm with `\0asm`).
//!
//! The bytes are deterministic — the same input gives the same output on every target (pure Rust:
//! flate2 over miniz_oxide, so the npm package's wasm build writes what the native CLI writes): a
//! fixed level ([`LEVEL`]), no file name, modification time 0 and the "unknown" operating system
//! (255) in the header.

use std::io::{Read, Write};

/// The compression level (flate2's best, 9): the bundle is written once and downloaded often.
pub const LEVEL: u32 = 9;

/// Largest decompressed file a reader accepts (512 MiB): a bundle file is a few MB, so more is a
/// damaged or hostile file, refused before it exhausts memory.
pub const MAX_DECOMPRESSED: u64 = 512 << 20;

/// True when `bytes` start with the gzip magic (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// `bytes` as one gzip member (see the module docs for what makes it deterministic).
pub fn compress(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(
            Vec::with_capacity(bytes.len() / 2 + 64),
            flate2::Compression::new(LEVEL),
        );
    // Writing into a Vec cannot fail.
    e.write_all(bytes).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}

/// `bytes` decompressed when they are gzip ([`is_gzip`]), else as they are.
///
/// Errors (one sentence, for the caller to prefix with the file's name): a truncated or corrupt
/// stream, a checksum or length mismatch, data after the gzip member, or more than
/// [`MAX_DECOMPRESSED`] bytes.
pub fn decompress_if_gzip(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    if !is_gzip(bytes) {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let mut d = flate2::bufread::GzDecoder::new(bytes);
    let mut out = Vec::new();
    let read = (&mut d)
        .take(MAX_DECOMPRESSED + 1)
        .read_to_end(&mut out)
        .map_err(|e| {
            let why = e.to_string();
            if e.kind() == std::io::ErrorKind::UnexpectedEof || why.contains("unexpected end") {
                "damaged gzip: the data ends early (truncated)".to_string()
            } else {
                format!("damaged gzip: {why}")
            }
        })?;
    if read as u64 > MAX_DECOMPRESSED {
        return Err(format!(
            "damaged gzip: it decompresses to more than {} MiB",
            MAX_DECOMPRESSED >> 20
        ));
    }
    let rest = d.into_inner();
    if !rest.is_empty() {
        return Err(format!(
            "damaged gzip: {} bytes after the end of the compressed data",
            rest.len()
        ));
    }
    Ok(std::borrow::Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The same bytes on every target (this test also runs in wasm32 under Node): the npm
    /// package's site build must write the native CLI's bundle.
    #[test]
    fn same_bytes_on_every_target() {
        let mut text = Vec::new();
        let mut x: u32 = 1;
        for i in 0..40_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let word = ["shard ", "chunk ", "core ", "model ", "wasm "][(x >> 16) as usize % 5];
            text.extend_from_slice(word.as_bytes());
            text.push((i % 251) as u8);
        }
        let z = compress(&text);
        use sha2::Digest;
        let hex = lightembed::format::to_hex(&sha2::Sha256::digest(&z));
        assert_eq!(
            (z.len(), hex.as_str()),
            (
                59386,
                "034eb48fa917c7bdcaa92952c92a61e74b706e13acc43856d521d5f63cd934a3"
            )
        );
    }

    #[test]
    fn round_trip_and_deterministic_header() {
        let text = b"lightembed lightembed lightembed fragments ".repeat(100);
        let z = compress(&text);
        assert!(is_gzip(&z));
        // magic, deflate, no flags, mtime 0, XFL 2 (best), OS 255 (unknown)
        assert_eq!(&z[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
        assert!(z.len() < text.len() / 10, "{} bytes", z.len());
        assert_eq!(compress(&text), z);
        assert_eq!(decompress_if_gzip(&z).unwrap().as_ref(), &text[..]);
        assert_eq!(
            decompress_if_gzip(b"LEFI....").unwrap().as_ref(),
            b"LEFI...."
        );
        assert_eq!(decompress_if_gzip(b"").unwrap().as_ref(), b"");
    }

    #[test]
    fn damaged_streams_are_named() {
        let z = compress(&b"some text to compress, some text to compress".repeat(50));
        let cut = decompress_if_gzip(&z[..z.len() / 2]).unwrap_err();
        assert_eq!(cut, "damaged gzip: the data ends early (truncated)");
        let mut flipped = z.clone();
        let n = flipped.len();
        flipped[n - 6] ^= 0xff; // inside the CRC-32
        let bad = decompress_if_gzip(&flipped).unwrap_err();
        assert!(bad.starts_with("damaged gzip: "), "{bad}");
        let mut trailing = z.clone();
        trailing.extend_from_slice(b"xyz");
        assert_eq!(
            decompress_if_gzip(&trailing).unwrap_err(),
            "damaged gzip: 3 bytes after the end of the compressed data"
        );
        // the magic alone
        assert!(decompress_if_gzip(&[0x1f, 0x8b])
            .unwrap_err()
            .starts_with("damaged gzip"));
    }
}
