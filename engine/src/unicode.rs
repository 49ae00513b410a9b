//! The Unicode normalisation data the tokenizers need — canonical and compatibility
//! decomposition, canonical combining class, combining marks, one character's NFKC — in one
//! place, so a build can carry it as a *file* instead of compiled-in tables.
//!
//! By default every function here is the crate `unicode-normalization` itself. With the cargo
//! feature `runtime-unicode` (the site widget's wasm, `js/build.sh`: ~130 KB of tables that most
//! queries never touch) the functions read tables loaded at run time with [`load`]:
//!
//! * a *site subset* (`unicode.<hash>.bin` of a `lightembed site` bundle): a record for every
//!   non-ASCII character of the site's text and everything those characters decompose or
//!   lowercase to, so excerpts and highlights need nothing more;
//! * the *complete* tables (`unicode-all.<hash>.bin`), which the widget fetches only for a query
//!   with a non-ASCII character the subset does not cover ([`covers`]).
//!
//! Both files are written by [`encode`] straight from `unicode-normalization`, so a loaded
//! table answers exactly as the crate does (tested for every code point against the crate).
//!
//! # File layout (`LEU1`)
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `LEU1` |
//! | 1 | flags: bit 0 = complete (a character without a record is plain: no decomposition, class 0, no mark, NFKC itself) |
//! | varint | record count *n* |
//! | *n* × record | sorted by code point, strictly increasing |
//!
//! A record: varint code-point delta from the previous record (the first from 0), the canonical
//! combining class (1 byte), a bit set (1 byte: 1 = combining mark (General_Category M), 2 =
//! canonical decomposition, 4 = compatibility decomposition differing from the canonical one, 8 =
//! NFKC differing from the character), then for each of bits 2, 4, 8 that is set a length byte
//! (1–[`MAX_EXPANSION`]) and that many code points as varints. Every decomposition is the full
//! (recursive) one.

use std::fmt;

use crate::query_rows::put_varint;

/// The most characters one code point decomposes into (U+FDFA's compatibility decomposition has
/// 18) — the bound [`load`] checks every length against.
pub const MAX_EXPANSION: usize = 18;

const MAGIC: &[u8; 4] = b"LEU1";
const COMPLETE: u8 = 1;
const MARK: u8 = 1;
const CANON: u8 = 2;
const COMPAT: u8 = 4;
const NFKC: u8 = 8;

/// Why a Unicode tables file was refused by [`load`]/[`Tables::parse`]; nothing was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnicodeTablesError(String);

impl fmt::Display for UnicodeTablesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unicode tables file is malformed: {}", self.0)
    }
}

impl std::error::Error for UnicodeTablesError {}

/// One character's record: what the crate says about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Record {
    ccc: u8,
    mark: bool,
    canon: Option<Box<[char]>>,
    compat: Option<Box<[char]>>,
    nfkc: Option<Box<[char]>>,
}

impl Record {
    /// The crate's answers for `c`.
    fn of(c: char) -> Record {
        use unicode_normalization::{char as un, UnicodeNormalization};
        let mut canon = Vec::new();
        un::decompose_canonical(c, |d| canon.push(d));
        let mut compat = Vec::new();
        un::decompose_compatible(c, |d| compat.push(d));
        let nfkc: Vec<char> = std::iter::once(c).nfkc().collect();
        let differs = |v: &Vec<char>| !(v.len() == 1 && v[0] == c);
        Record {
            ccc: un::canonical_combining_class(c),
            mark: un::is_combining_mark(c),
            compat: (compat != canon && differs(&compat)).then(|| compat.into()),
            canon: differs(&canon).then(|| canon.into()),
            nfkc: differs(&nfkc).then(|| nfkc.into()),
        }
    }

    fn is_plain(&self) -> bool {
        *self == Record::default()
    }

    /// Every character this record's answers name (for the subset's closure).
    fn outputs(&self) -> impl Iterator<Item = char> + '_ {
        [&self.canon, &self.compat, &self.nfkc]
            .into_iter()
            .flatten()
            .flat_map(|v| v.iter().copied())
    }
}

/// Parsed Unicode tables: the records by character and whether they are complete.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    complete: bool,
    records: std::collections::HashMap<char, Record>,
}

impl Tables {
    /// Parses and checks a `LEU1` file (layout in the module docs): magic, flags, every varint,
    /// code points valid and strictly increasing, lengths 1–[`MAX_EXPANSION`], no trailing bytes.
    /// The record count is checked against the bytes left before anything is allocated for it.
    pub fn parse(bytes: &[u8]) -> Result<Tables, UnicodeTablesError> {
        let err = |m: String| UnicodeTablesError(m);
        if bytes.len() < 5 || &bytes[..4] != MAGIC {
            return Err(err("it does not start with LEU1".into()));
        }
        let flags = bytes[4];
        if flags & !COMPLETE != 0 {
            return Err(err(format!("unknown flags {flags:#04x}")));
        }
        let mut at = 5;
        let n = varint(bytes, &mut at)?;
        // A record takes at least 3 bytes.
        if n > (bytes.len() - at) as u64 / 3 {
            return Err(err(format!(
                "{n} records cannot fit in the {} bytes left",
                bytes.len() - at
            )));
        }
        let mut records = std::collections::HashMap::with_capacity(n as usize);
        let mut cp: u64 = 0;
        for i in 0..n {
            let delta = varint(bytes, &mut at)?;
            if i > 0 && delta == 0 {
                return Err(err(format!("record {i} repeats a code point")));
            }
            cp += delta;
            let c = to_char(cp)
                .ok_or_else(|| err(format!("record {i}: U+{cp:X} is not a character")))?;
            let (Some(&ccc), Some(&bits)) = (bytes.get(at), bytes.get(at + 1)) else {
                return Err(err(format!("truncated in record {i}")));
            };
            at += 2;
            if bits & !(MARK | CANON | COMPAT | NFKC) != 0 {
                return Err(err(format!("record {i}: unknown bits {bits:#04x}")));
            }
            let mut seq =
                |bit: u8| -> Result<Option<Box<[char]>>, UnicodeTablesError> {
                    if bits & bit == 0 {
                        return Ok(None);
                    }
                    let len = *bytes
                        .get(at)
                        .ok_or_else(|| err(format!("truncated in record {i}")))?
                        as usize;
                    at += 1;
                    if len == 0 || len > MAX_EXPANSION {
                        return Err(err(format!(
                            "record {i}: a decomposition of {len} characters"
                        )));
                    }
                    let mut v = Vec::with_capacity(len);
                    for _ in 0..len {
                        let u = varint(bytes, &mut at)?;
                        v.push(to_char(u).ok_or_else(|| {
                            err(format!("record {i}: U+{u:X} is not a character"))
                        })?);
                    }
                    Ok(Some(v.into()))
                };
            let rec = Record {
                ccc,
                mark: bits & MARK != 0,
                canon: seq(CANON)?,
                compat: seq(COMPAT)?,
                nfkc: seq(NFKC)?,
            };
            records.insert(c, rec);
        }
        if at != bytes.len() {
            return Err(err(format!(
                "{} bytes after the last record",
                bytes.len() - at
            )));
        }
        Ok(Tables {
            complete: flags & COMPLETE != 0,
            records,
        })
    }

    /// True when the tables are the complete ones (a character without a record is plain).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there is no record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// True when every character of `text` can be answered: ASCII, a Hangul syllable
    /// (decomposed by rule, never recorded), a record, or complete tables.
    pub fn covers(&self, text: &str) -> bool {
        self.complete
            || text
                .chars()
                .all(|c| c.is_ascii() || is_hangul_syllable(c) || self.records.contains_key(&c))
    }

    fn record(&self, c: char) -> Option<&Record> {
        if c.is_ascii() {
            None
        } else {
            self.records.get(&c)
        }
    }

    /// [`decompose_canonical`] from these tables (a character they have no record of is plain).
    pub fn decompose_canonical(&self, c: char, mut emit: impl FnMut(char)) {
        if hangul_decompose(c, &mut emit) {
            return;
        }
        match self.record(c).and_then(|r| r.canon.as_deref()) {
            Some(v) => v.iter().for_each(|&d| emit(d)),
            None => emit(c),
        }
    }

    /// [`decompose_compatible`] from these tables.
    pub fn decompose_compatible(&self, c: char, mut emit: impl FnMut(char)) {
        if hangul_decompose(c, &mut emit) {
            return;
        }
        match self
            .record(c)
            .and_then(|r| r.compat.as_deref().or(r.canon.as_deref()))
        {
            Some(v) => v.iter().for_each(|&d| emit(d)),
            None => emit(c),
        }
    }

    /// [`canonical_combining_class`] from these tables.
    pub fn canonical_combining_class(&self, c: char) -> u8 {
        self.record(c).map_or(0, |r| r.ccc)
    }

    /// [`is_combining_mark`] from these tables.
    pub fn is_combining_mark(&self, c: char) -> bool {
        self.record(c).is_some_and(|r| r.mark)
    }

    /// [`nfkc_char`] from these tables (a Hangul syllable is its own NFKC).
    pub fn nfkc_char(&self, c: char, mut emit: impl FnMut(char)) {
        match self.record(c).and_then(|r| r.nfkc.as_deref()) {
            Some(v) => v.iter().for_each(|&d| emit(d)),
            None => emit(c),
        }
    }
}

/// Hangul syllables (U+AC00–U+D7A3): their decomposition is arithmetic (Unicode §3.12), so the
/// tables leave out all 11,172 of them (they would be most of the complete file).
const S_BASE: u32 = 0xAC00;
const S_COUNT: u32 = 11_172;
const L_BASE: u32 = 0x1100;
const V_BASE: u32 = 0x1161;
const T_BASE: u32 = 0x11A7;
const T_COUNT: u32 = 28;
const N_COUNT: u32 = 21 * T_COUNT;

fn is_hangul_syllable(c: char) -> bool {
    (S_BASE..S_BASE + S_COUNT).contains(&(c as u32))
}

/// Emits the jamo of a Hangul syllable and returns true; false (nothing emitted) for any other
/// character.
fn hangul_decompose(c: char, emit: &mut impl FnMut(char)) -> bool {
    if !is_hangul_syllable(c) {
        return false;
    }
    let s = c as u32 - S_BASE;
    let jamo = |u: u32| char::from_u32(u).expect("jamo are characters");
    emit(jamo(L_BASE + s / N_COUNT));
    emit(jamo(V_BASE + (s % N_COUNT) / T_COUNT));
    if s % T_COUNT != 0 {
        emit(jamo(T_BASE + s % T_COUNT));
    }
    true
}

/// Writes a `LEU1` file from `unicode-normalization`.
///
/// `chars: None` writes the complete tables (a record for every code point that is not plain);
/// `Some(chars)` a subset covering those characters and, transitively, every character their
/// decompositions, NFKC and lowercase forms produce (plain ones get a plain record, so
/// [`Tables::covers`] knows them). ASCII characters are never recorded (always plain).
pub fn encode(chars: Option<&mut dyn Iterator<Item = char>>) -> Vec<u8> {
    let mut set = std::collections::BTreeMap::new();
    let complete = chars.is_none();
    match chars {
        None => {
            for u in 0x80..=0x10FFFFu32 {
                if let Some(c) = char::from_u32(u).filter(|&c| !is_hangul_syllable(c)) {
                    let r = Record::of(c);
                    if !r.is_plain() {
                        set.insert(c, r);
                    }
                }
            }
        }
        Some(it) => {
            let mut todo: Vec<char> = it.filter(|c| !c.is_ascii()).collect();
            while let Some(c) = todo.pop() {
                // Hangul syllables decompose by rule into plain jamo: nothing to record.
                if c.is_ascii() || is_hangul_syllable(c) || set.contains_key(&c) {
                    continue;
                }
                let r = Record::of(c);
                todo.extend(r.outputs());
                todo.extend(c.to_lowercase());
                for d in r.outputs() {
                    todo.extend(d.to_lowercase());
                }
                set.insert(c, r);
            }
        }
    }
    let mut out = MAGIC.to_vec();
    out.push(if complete { COMPLETE } else { 0 });
    put_varint(&mut out, set.len() as u64);
    let mut prev = 0u32;
    for (c, r) in &set {
        put_varint(&mut out, (*c as u32 - prev) as u64);
        prev = *c as u32;
        out.push(r.ccc);
        let bits = (r.mark as u8 * MARK)
            | (r.canon.is_some() as u8 * CANON)
            | (r.compat.is_some() as u8 * COMPAT)
            | (r.nfkc.is_some() as u8 * NFKC);
        out.push(bits);
        for v in [&r.canon, &r.compat, &r.nfkc].into_iter().flatten() {
            out.push(v.len() as u8);
            for d in v.iter() {
                put_varint(&mut out, *d as u64);
            }
        }
    }
    out
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, UnicodeTablesError> {
    let mut v = 0u64;
    for shift in (0..35).step_by(7) {
        let b = *bytes
            .get(*at)
            .ok_or_else(|| UnicodeTablesError(format!("truncated at byte {}", *at)))?;
        *at += 1;
        v |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(UnicodeTablesError(format!(
        "a varint longer than 5 bytes ending at byte {}",
        *at
    )))
}

fn to_char(u: u64) -> Option<char> {
    u32::try_from(u).ok().and_then(char::from_u32)
}

#[cfg(feature = "runtime-unicode")]
mod runtime {
    use super::{Tables, UnicodeTablesError};
    use std::cell::RefCell;

    thread_local! {
        static LOADED: RefCell<Tables> = RefCell::new(Tables::default());
    }

    pub fn load(bytes: &[u8]) -> Result<(), UnicodeTablesError> {
        let t = Tables::parse(bytes)?;
        LOADED.with(|l| {
            let mut l = l.borrow_mut();
            if t.complete {
                *l = t;
            } else if !l.complete {
                l.records.extend(t.records);
            }
        });
        Ok(())
    }

    pub fn covers(text: &str) -> bool {
        text.is_ascii() || LOADED.with(|l| l.borrow().covers(text))
    }

    /// Runs `f` with the loaded tables.
    pub fn with<T>(f: impl FnOnce(&Tables) -> T) -> T {
        LOADED.with(|l| f(&l.borrow()))
    }
}

/// Loads a `LEU1` file (site subset or complete tables) for this thread's tokenizers: a subset
/// adds to what is loaded, complete tables replace it. Only builds with the feature
/// `runtime-unicode` read them; the others check the file and keep the compiled-in crate.
///
/// # Errors
/// The file's first problem ([`Tables::parse`]); nothing is loaded then.
pub fn load(bytes: &[u8]) -> Result<(), UnicodeTablesError> {
    #[cfg(feature = "runtime-unicode")]
    return runtime::load(bytes);
    #[cfg(not(feature = "runtime-unicode"))]
    Tables::parse(bytes).map(|_| ())
}

/// True when the tokenizers can process `text` exactly: always without `runtime-unicode`; with
/// it, when `text` is ASCII or every other character is covered by the loaded tables.
pub fn covers(text: &str) -> bool {
    #[cfg(feature = "runtime-unicode")]
    return runtime::covers(text);
    #[cfg(not(feature = "runtime-unicode"))]
    {
        let _ = text;
        true
    }
}

/// Full canonical decomposition (NFD of the one character, before reordering), as
/// `unicode_normalization::char::decompose_canonical`.
#[inline]
pub fn decompose_canonical(c: char, emit: impl FnMut(char)) {
    #[cfg(feature = "runtime-unicode")]
    {
        let mut emit = emit;
        if c.is_ascii() {
            return emit(c);
        }
        runtime::with(|t| t.decompose_canonical(c, emit))
    }
    #[cfg(not(feature = "runtime-unicode"))]
    unicode_normalization::char::decompose_canonical(c, emit)
}

/// Full compatibility decomposition, as `unicode_normalization::char::decompose_compatible`.
#[inline]
pub fn decompose_compatible(c: char, emit: impl FnMut(char)) {
    #[cfg(feature = "runtime-unicode")]
    {
        let mut emit = emit;
        if c.is_ascii() {
            return emit(c);
        }
        runtime::with(|t| t.decompose_compatible(c, emit))
    }
    #[cfg(not(feature = "runtime-unicode"))]
    unicode_normalization::char::decompose_compatible(c, emit)
}

/// Canonical combining class, as `unicode_normalization::char::canonical_combining_class`.
#[inline]
pub fn canonical_combining_class(c: char) -> u8 {
    #[cfg(feature = "runtime-unicode")]
    return if c.is_ascii() {
        0
    } else {
        runtime::with(|t| t.canonical_combining_class(c))
    };
    #[cfg(not(feature = "runtime-unicode"))]
    unicode_normalization::char::canonical_combining_class(c)
}

/// General category M (Mn, Mc, Me), as `unicode_normalization::char::is_combining_mark`.
#[inline]
pub fn is_combining_mark(c: char) -> bool {
    #[cfg(feature = "runtime-unicode")]
    return !c.is_ascii() && runtime::with(|t| t.is_combining_mark(c));
    #[cfg(not(feature = "runtime-unicode"))]
    unicode_normalization::char::is_combining_mark(c)
}

/// NFKC of the one-character string `c`.
#[inline]
pub fn nfkc_char(c: char, emit: impl FnMut(char)) {
    #[cfg(feature = "runtime-unicode")]
    {
        let mut emit = emit;
        if c.is_ascii() {
            return emit(c);
        }
        runtime::with(|t| t.nfkc_char(c, emit))
    }
    #[cfg(not(feature = "runtime-unicode"))]
    {
        use unicode_normalization::UnicodeNormalization;
        std::iter::once(c).nfkc().for_each(emit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization::{char as un, UnicodeNormalization};

    fn collect(f: impl FnOnce(&mut dyn FnMut(char))) -> Vec<char> {
        let mut v = Vec::new();
        f(&mut |d| v.push(d));
        v
    }

    /// The complete tables answer as the crate for every code point (Hangul syllables by rule).
    #[test]
    fn complete_tables_equal_the_crate_everywhere() {
        let bytes = encode(None);
        let t = Tables::parse(&bytes).unwrap();
        assert!(t.is_complete());
        assert!(t.len() > 5000 && t.len() < 12_000, "{} records", t.len());
        for u in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(u) else { continue };
            assert_eq!(
                t.canonical_combining_class(c),
                un::canonical_combining_class(c),
                "ccc U+{u:04X}"
            );
            assert_eq!(
                t.is_combining_mark(c),
                un::is_combining_mark(c),
                "mark U+{u:04X}"
            );
            assert_eq!(
                collect(|e| t.decompose_canonical(c, e)),
                collect(|e| un::decompose_canonical(c, e)),
                "canonical U+{u:04X}"
            );
            assert_eq!(
                collect(|e| t.decompose_compatible(c, e)),
                collect(|e| un::decompose_compatible(c, e)),
                "compatible U+{u:04X}"
            );
            assert_eq!(
                collect(|e| t.nfkc_char(c, e)),
                std::iter::once(c).nfkc().collect::<Vec<_>>(),
                "nfkc U+{u:04X}"
            );
        }
        // 각 = ᄀ ᅡ ᆨ, by rule
        assert_eq!(
            collect(|e| t.decompose_canonical('각', e)),
            ['\u{1100}', '\u{1161}', '\u{11A8}']
        );
    }

    /// A subset covers its characters and their whole closure, nothing else.
    #[test]
    fn subset_covers_its_closure() {
        let text = "Café ﬁne Ǆ İstanbul ｶﾞ ½ naïve";
        let bytes = encode(Some(&mut text.chars()));
        let t = Tables::parse(&bytes).unwrap();
        assert!(!t.is_complete());
        assert!(t.covers(text));
        assert!(t.covers("e\u{301}")); // é's decomposition
        assert!(t.covers("ǆ")); // Ǆ's lowercase
        assert!(t.covers("i\u{307}")); // İ's lowercase
        assert!(!t.covers("ü"));
        assert!(t.covers("한국어"), "Hangul syllables decompose by rule");
        assert!(t.covers("plain ascii"));
        // ASCII is never recorded
        assert!(t.record('a').is_none());
    }

    #[test]
    fn malformed_files_are_refused_with_their_reason() {
        let good = encode(Some(&mut "é".chars()));
        let msg = |b: &[u8]| Tables::parse(b).unwrap_err().to_string();
        assert_eq!(
            msg(b"LEU2\0\0"),
            "Unicode tables file is malformed: it does not start with LEU1"
        );
        assert_eq!(
            msg(b"LEU1\x02\0"),
            "Unicode tables file is malformed: unknown flags 0x02"
        );
        assert_eq!(
            msg(b"LEU1\0\xff\xff\xff\xff\x0f"),
            "Unicode tables file is malformed: 4294967295 records cannot fit in the 0 bytes left"
        );
        // é (a canonical decomposition) and U+0301 (a mark of class 230: its bit byte is last)
        assert_eq!(
            msg(&good[..good.len() - 1]),
            "Unicode tables file is malformed: truncated in record 1"
        );
        assert_eq!(
            msg(&good[..good.len() - 3]),
            format!(
                "Unicode tables file is malformed: truncated at byte {}",
                good.len() - 3
            )
        );
        let mut extra = good.clone();
        extra.push(0);
        assert_eq!(
            msg(&extra),
            "Unicode tables file is malformed: 1 bytes after the last record"
        );
        // a code point past U+10FFFF
        assert_eq!(
            msg(b"LEU1\0\x01\xff\xff\xc4\x00\x00\x00"),
            "Unicode tables file is malformed: record 0: U+113FFF is not a character"
        );
        // a decomposition of 19 characters
        let mut long = b"LEU1\0\x01\xe9\x01\x00\x02\x13".to_vec();
        long.extend(std::iter::repeat(b'a').take(19));
        assert_eq!(
            msg(&long),
            "Unicode tables file is malformed: record 0: a decomposition of 19 characters"
        );
    }
}
