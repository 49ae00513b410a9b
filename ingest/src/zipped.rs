//! Zipped XML documents (Word `.docx`, OpenDocument `.odt`, EPUB), read within bounds: the zip
//! crate with `flate2`'s pure-Rust inflate (so the wasm worker reads them too), `quick-xml` for
//! the XML parts.
//!
//! Bounds, so that a crafted file costs little: at most [`MAX_ENTRIES`] entries in the archive;
//! each part read is inflated to at most [`MAX_PART_BYTES`] and all parts of a document together
//! to at most [`MAX_TOTAL_BYTES`], counted on the bytes actually inflated (never the sizes the
//! archive declares, which a zip bomb lies about); XML nested at most [`MAX_DEPTH`] deep.

use std::io::{Cursor, Read};

use crate::{DocumentError, MAX_DEPTH};

/// Most entries an archive may list.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes one part may inflate to (64 MiB).
pub const MAX_PART_BYTES: u64 = 64 << 20;
/// Most bytes all parts read from one document may inflate to (256 MiB).
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// An open archive and what is left of its inflate budget.
pub(crate) struct Zipped<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    format: &'static str,
    left: u64,
}

impl<'a> Zipped<'a> {
    /// Opens `bytes` as the zip archive of a `format` document (`"Word"`, …).
    pub(crate) fn open(bytes: &'a [u8], format: &'static str) -> Result<Zipped<'a>, DocumentError> {
        let archive =
            zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| DocumentError::Broken {
                format,
                reason: format!("not a zip archive ({e})"),
            })?;
        if archive.len() > MAX_ENTRIES {
            return Err(DocumentError::TooLarge {
                what: format!("{} entries in the archive", archive.len()),
                limit: format!("{MAX_ENTRIES} entries"),
            });
        }
        Ok(Zipped {
            archive,
            format,
            left: MAX_TOTAL_BYTES,
        })
    }

    /// The broken-file error of this document's format.
    pub(crate) fn broken(&self, reason: impl Into<String>) -> DocumentError {
        DocumentError::Broken {
            format: self.format,
            reason: reason.into(),
        }
    }

    /// The inflated bytes of the part `name`; `None` when the archive has no such part.
    pub(crate) fn part(&mut self, name: &str) -> Result<Option<Vec<u8>>, DocumentError> {
        let format = self.format;
        let mut file = match self.archive.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => {
                return Err(DocumentError::Broken {
                    format,
                    reason: format!("{name}: {e}"),
                })
            }
        };
        let cap = MAX_PART_BYTES.min(self.left);
        let mut out = Vec::new();
        (&mut file)
            .take(cap + 1)
            .read_to_end(&mut out)
            .map_err(|e| DocumentError::Broken {
                format,
                reason: format!("{name}: {e}"),
            })?;
        if out.len() as u64 > cap {
            let (what, limit) = if cap == MAX_PART_BYTES {
                (
                    format!("{name} inflates to more than {} MiB", MAX_PART_BYTES >> 20),
                    "per part",
                )
            } else {
                (
                    format!(
                        "the parts read inflate to more than {} MiB",
                        MAX_TOTAL_BYTES >> 20
                    ),
                    "per document",
                )
            };
            return Err(DocumentError::TooLarge {
                what,
                limit: limit.into(),
            });
        }
        self.left -= out.len() as u64;
        Ok(Some(out))
    }

    /// [`Zipped::part`] as UTF-8 text (a byte-order mark dropped); an error when missing.
    pub(crate) fn text_part(&mut self, name: &str) -> Result<String, DocumentError> {
        let bytes = self
            .part(name)?
            .ok_or_else(|| self.broken(format!("no {name} in the archive")))?;
        let text =
            String::from_utf8(bytes).map_err(|_| self.broken(format!("{name} is not UTF-8")))?;
        Ok(text
            .strip_prefix('\u{feff}')
            .map(str::to_string)
            .unwrap_or(text))
    }
}

/// One XML event as the document readers see it.
pub(crate) enum Xml<'e> {
    /// A start tag (or an empty element, followed by its [`Xml::End`]): local name, attributes.
    Start(&'e [u8], &'e quick_xml::events::BytesStart<'e>),
    /// An end tag: local name.
    End(&'e [u8]),
    /// Text (entities resolved).
    Text(&'e str),
}

/// Walks the XML `text`, calling `each` for start tags, end tags and text, with names without
/// their namespace prefix. Errors: XML that does not parse, or nested deeper than [`MAX_DEPTH`].
pub(crate) fn walk_xml(
    text: &str,
    format: &'static str,
    part: &str,
    mut each: impl FnMut(Xml<'_>),
) -> Result<(), DocumentError> {
    use quick_xml::events::Event;
    let broken = |reason: String| DocumentError::Broken {
        format,
        reason: format!("{part}: {reason}"),
    };
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(DocumentError::TooLarge {
                        what: format!("{part} nests elements more than {MAX_DEPTH} deep"),
                        limit: "XML depth".into(),
                    });
                }
                each(Xml::Start(e.local_name().into_inner(), &e));
            }
            Ok(Event::Empty(e)) => {
                let name = e.local_name();
                each(Xml::Start(name.into_inner(), &e));
                each(Xml::End(name.into_inner()));
            }
            Ok(Event::End(e)) => {
                depth = depth.saturating_sub(1);
                each(Xml::End(e.local_name().into_inner()));
            }
            Ok(Event::Text(t)) => {
                let t = t.unescape().map_err(|e| broken(e.to_string()))?;
                each(Xml::Text(&t));
            }
            Ok(Event::CData(t)) => {
                let t = String::from_utf8_lossy(&t).into_owned();
                each(Xml::Text(&t));
            }
            Ok(Event::Eof) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(broken(e.to_string())),
        }
    }
}

/// The value of attribute `name` (its local name, any prefix) of `e`, entities resolved.
pub(crate) fn attr(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().into_inner() == name)
            .then(|| a.unescape_value().ok().map(|v| v.into_owned()))
            .flatten()
    })
}
