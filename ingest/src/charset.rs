//! File bytes → text: UTF-8, else the charset an HTML page declares, else windows-1252 with a
//! warning ([`decode`]); its detection half ([`charset_label`]) needs no decoder.

use crate::Format;

/// The warning [`decode`] gives (callers prefix the file name) when it had to guess
/// windows-1252 ([`Charset::Fallback`]).
pub const FALLBACK_WARNING: &str = "not UTF-8; decoded as windows-1252";

/// How a file's bytes are to be read, as [`charset_label`] detects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Charset {
    /// Valid UTF-8 (after a UTF-8 byte-order mark, which the decoder drops).
    Utf8,
    /// An HTML page that is not UTF-8 and declares this charset label (as written in its
    /// `<meta>`, ASCII lower case, e.g. `windows-1252`, `iso-8859-1`, `koi8-r`): decode with the
    /// encoding of that WHATWG label.
    Declared(String),
    /// Neither: decode as windows-1252 (every byte is a character, so nothing is lost), with the
    /// warning [`FALLBACK_WARNING`].
    Fallback,
}

/// Which charset a file's bytes are in: the detection half of [`decode`], without a decoder, so
/// a caller that has one (the browser app: `TextDecoder`) decodes without linking `encoding_rs`.
///
/// * A leading UTF-8 byte-order mark is skipped (the caller drops it before decoding); valid
///   UTF-8 → [`Charset::Utf8`].
/// * [`Format::Html`] only: the first `<meta>` in the first 1024 bytes whose `charset=` label
///   `is_known` accepts (`<meta charset="…">` or
///   `<meta http-equiv="Content-Type" content="text/html; charset=…">`; unknown labels are
///   skipped, as browsers do) → [`Charset::Declared`] with that label — unless it is a UTF-8 or
///   UTF-16 label ([`is_utf8_or_utf16_label`]): the bytes are not UTF-8, so that declaration is
///   ignored → [`Charset::Fallback`].
/// * Anything else → [`Charset::Fallback`].
///
/// `is_known(label)` says whether the caller's decoder has an encoding for the label (WHATWG
/// labels: `encoding_rs::Encoding::for_label(label).is_some()` in [`decode`],
/// `TextDecoder::new_with_label(label).is_ok()` in the browser).
///
/// ```
/// use lightembed_ingest::{charset_label, Charset, Format};
/// let known = |l: &str| ["windows-1252", "koi8-r"].contains(&l);
/// assert_eq!(charset_label(b"caf\xe9", Format::Text, known), Charset::Fallback);
/// assert_eq!(charset_label("café".as_bytes(), Format::Text, known), Charset::Utf8);
/// assert_eq!(
///     charset_label(b"<meta charset=\"Windows-1252\"><p>caf\xe9", Format::Html, known),
///     Charset::Declared("windows-1252".into())
/// );
/// ```
pub fn charset_label(bytes: &[u8], format: Format, is_known: impl Fn(&str) -> bool) -> Charset {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if std::str::from_utf8(bytes).is_ok() {
        return Charset::Utf8;
    }
    if format == Format::Html {
        if let Some(label) = declared_label(bytes, is_known) {
            if !is_utf8_or_utf16_label(&label) {
                return Charset::Declared(label);
            }
        }
    }
    Charset::Fallback
}

/// Whether a (lower-case, trimmed) WHATWG encoding label names UTF-8, UTF-16LE or UTF-16BE
/// (the Encoding Standard's complete label lists for those three encodings).
pub fn is_utf8_or_utf16_label(label: &str) -> bool {
    matches!(
        label,
        // UTF-8
        "unicode-1-1-utf-8"
            | "unicode11utf8"
            | "unicode20utf8"
            | "utf-8"
            | "utf8"
            | "x-unicode20utf8"
            // UTF-16BE
            | "unicodefffe"
            | "utf-16be"
            // UTF-16LE
            | "csunicode"
            | "iso-10646-ucs-2"
            | "ucs-2"
            | "unicode"
            | "unicodefeff"
            | "utf-16"
            | "utf-16le"
    )
}

/// File bytes → text, and a warning when the charset had to be guessed.
///
/// * A UTF-8 byte-order mark is dropped; valid UTF-8 is taken as it is.
/// * A UTF-16 byte-order mark (`FF FE` little-endian, `FE FF` big-endian) decides, as in browsers:
///   the rest is decoded as UTF-16 (what Windows tools write as "Unicode").
/// * HTML that declares its charset in the first 1024 bytes (`<meta charset="…">` or
///   `<meta http-equiv="Content-Type" content="text/html; charset=…">`) is decoded with that
///   encoding (WHATWG labels: `iso-8859-1`, `latin1` and `us-ascii` mean windows-1252, as in
///   browsers). A declaration of UTF-8 or UTF-16 on bytes that are not UTF-8 is ignored.
/// * Anything else is decoded as windows-1252 (every byte is a character, so nothing is lost),
///   with the warning `not UTF-8; decoded as windows-1252` ([`FALLBACK_WARNING`]; callers prefix
///   the file name).
///
/// A declared encoding that cannot decode some bytes replaces them with U+FFFD and warns
/// `not valid <encoding>; undecodable bytes replaced`.
///
/// The detection is [`charset_label`]; this adds the decoders (`encoding_rs`).
pub fn decode(bytes: &[u8], format: Format) -> (String, Option<String>) {
    if let Some(enc) = utf16_bom(bytes).and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
    {
        let (text, had_errors) = enc.decode_without_bom_handling(&bytes[2..]);
        let warning =
            had_errors.then(|| format!("not valid {}; undecodable bytes replaced", enc.name()));
        return (text.into_owned(), warning);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let for_label = |label: &str| encoding_rs::Encoding::for_label(label.as_bytes());
    let declared = match charset_label(bytes, format, |label| for_label(label).is_some()) {
        // Already validated: nothing is replaced.
        Charset::Utf8 => return (String::from_utf8_lossy(bytes).into_owned(), None),
        Charset::Declared(label) => for_label(&label),
        Charset::Fallback => None,
    };
    if let Some(enc) = declared {
        let (text, had_errors) = enc.decode_without_bom_handling(bytes);
        let warning =
            had_errors.then(|| format!("not valid {}; undecodable bytes replaced", enc.name()));
        return (text.into_owned(), warning);
    }
    let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes);
    (text.into_owned(), Some(FALLBACK_WARNING.to_string()))
}

/// The WHATWG label (`utf-16le`, `utf-16be`) of the UTF-16 encoding a 2-byte byte-order mark at
/// the start of `bytes` names (`FF FE`, `FE FF`), for `decode` here and the app's `TextDecoder`.
pub fn utf16_bom(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, ..] => Some("utf-16le"),
        [0xFE, 0xFF, ..] => Some("utf-16be"),
        _ => None,
    }
}

/// Whether `bytes` look binary: a NUL byte in the first 8 KiB, unless a UTF-16 byte-order mark
/// says the NULs are the high bytes of UTF-16 text ([`decode`] reads that). The CLI skips such
/// files; the app refuses such a dropped file.
pub fn looks_binary(bytes: &[u8]) -> bool {
    utf16_bom(bytes).is_none() && bytes[..bytes.len().min(8192)].contains(&0)
}

/// The first charset label that `is_known` accepts in a `<meta>` tag within the first 1024 bytes
/// of an HTML page (ASCII lower case).
fn declared_label(bytes: &[u8], is_known: impl Fn(&str) -> bool) -> Option<String> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"<meta") {
        let start = from + i + 5;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        // `charset=…` covers both `<meta charset=…>` and `content="text/html; charset=…"`.
        if let Some(c) = find(tag, b"charset") {
            let mut rest = &tag[c + 7..];
            rest = trim_ascii_start(rest);
            if let Some(r) = rest.strip_prefix(b"=") {
                let r = trim_ascii_start(r);
                let r = r
                    .strip_prefix(b"\"")
                    .or_else(|| r.strip_prefix(b"'"))
                    .unwrap_or(r);
                let label_end = r
                    .iter()
                    .position(|&b| {
                        matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') || b.is_ascii_whitespace()
                    })
                    .unwrap_or(r.len());
                // Labels are ASCII; other bytes never name an encoding.
                if let Ok(label) = std::str::from_utf8(&r[..label_end]) {
                    if label.is_ascii() && !label.is_empty() && is_known(label) {
                        return Some(label.to_string());
                    }
                }
            }
        }
        from = end.min(lower.len());
        if from >= lower.len() {
            break;
        }
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_ascii_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}
