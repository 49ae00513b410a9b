//! The library of a person's own documents, as the page keeps it (pure Rust, tested natively):
//! what is remembered of each original file ([`FileRecord`]; the bytes themselves live in the
//! page's IndexedDB, `page::files`), which files of a drop are sent to be indexed and which
//! documents a re-dropped folder no longer has ([`plan_drop`]), which files of a folder are
//! read ([`folder_format`]), and the library as one file to move to another browser
//! ([`export_zip`], [`import_zip`]).

use std::collections::{HashMap, HashSet};
use std::io::{Cursor, Read, Write};

use serde::{Deserialize, Serialize};

use crate::worker::chunk::{user_doc_id, Format};

/// What the page remembers of one original file (its bytes are stored beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The document id ([`user_doc_id`] of `name`).
    pub doc_id: String,
    /// The file name, or its path inside a dropped folder (`papers/2024/a.pdf`).
    pub name: String,
    /// How it is read.
    pub format: Format,
    /// SHA-256 of the bytes (hex): a re-drop sends only files whose hash changed.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

impl FileRecord {
    /// The record of file `name` with these bytes' `sha256` and `size`.
    pub fn new(name: &str, sha256: String, size: u64) -> FileRecord {
        FileRecord {
            doc_id: user_doc_id(name),
            name: name.to_string(),
            format: Format::from_name(name),
            sha256,
            size,
        }
    }

    /// The folder a file of a dropped folder came from (the path's first part), if it has one.
    pub fn folder(&self) -> Option<&str> {
        folder_of(&self.name)
    }
}

/// The first part of a path (`papers` of `papers/2024/a.pdf`); `None` for a bare file name.
pub fn folder_of(path: &str) -> Option<&str> {
    path.split_once('/')
        .map(|(root, _)| root)
        .filter(|r| !r.is_empty())
}

/// The extensions the app reads (any case).
pub const READABLE: [&str; 9] = [
    "txt", "md", "markdown", "html", "htm", "pdf", "docx", "odt", "epub",
];

/// How a file found in a dropped folder is read, or why it is skipped: only the formats the app
/// reads ([`READABLE`]) — a folder also holds images, archives and programs, which are counted
/// and named as skipped, not read as text. Hidden files and everything inside a hidden folder
/// below the dropped one (`.git/`, `.temps/`) are skipped, as `lightembed index` skips them when
/// it walks a folder (`path` starts with the dropped folder's own name, which may be hidden, as
/// the folder given to the CLI may be). (A file dropped or picked by itself is read whatever its
/// name: as text unless its extension says otherwise.)
///
/// # Errors
/// The reason, e.g. `not a format the app reads (.png)`, `in a hidden folder (.temps)`.
pub fn folder_format(path: &str) -> Result<Format, String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    if file.starts_with('.') {
        return Err("a hidden file".into());
    }
    let folders: Vec<&str> = path.split('/').collect();
    let below = folders.get(1..folders.len() - 1).unwrap_or(&[]);
    if let Some(hidden) = below.iter().find(|f| f.starts_with('.')) {
        return Err(format!("in a hidden folder ({hidden})"));
    }
    // The CLI's default exclude (`lightembed_build::inputs::Excludes`): Sphinx copies every
    // page's source there, so the folder would index each page twice, once as raw markup.
    if below.contains(&"_sources") {
        return Err("in a _sources folder (the pages' sources)".into());
    }
    let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext {
        Some(e) if READABLE.contains(&e.as_str()) => Ok(Format::from_name(path)),
        Some(e) => Err(format!("not a format the app reads (.{e})")),
        None => Err("not a format the app reads (no extension)".into()),
    }
}

/// Why a folder's `NAME.txt` is skipped when [`sources_beside_pages`] finds its page.
pub const PAGE_SOURCE: &str = "the source of the page beside it";

/// True for the reasons [`folder_format`] and [`sources_beside_pages`] give for files a folder
/// is expected to hold besides documents (images, hidden files, page sources): counted in a
/// drop's summary, not shown as errors.
pub fn is_expected_skip(reason: &str) -> bool {
    reason.starts_with("not a format")
        || reason == "a hidden file"
        || reason.starts_with("in a hidden folder")
        || reason.starts_with("in a _sources folder")
        || reason == PAGE_SOURCE
}

/// The CLI's other default exclude, for the files of a picked or dropped folder: the positions
/// in `paths` of each `NAME.txt` with a `NAME.html` or `NAME.htm` beside it in the same folder
/// (the AsciiDoc source of that page, as in git-doc: the page is the same text, rendered). The
/// extension is matched in any case, the name exactly, as the CLI's file-system check does.
pub fn sources_beside_pages(paths: &[&str]) -> std::collections::HashSet<usize> {
    let stem = |p: &str, exts: &[&str]| -> Option<String> {
        let (stem, ext) = p.rsplit_once('.')?;
        exts.iter()
            .any(|e| ext.eq_ignore_ascii_case(e))
            .then(|| stem.to_string())
    };
    let pages: std::collections::HashSet<String> = paths
        .iter()
        .filter_map(|p| stem(p, &["html", "htm"]))
        .collect();
    paths
        .iter()
        .enumerate()
        .filter(|(_, p)| stem(p, &["txt"]).is_some_and(|s| pages.contains(&s)))
        .map(|(i, _)| i)
        .collect()
}

/// What a drop does: which of its files are sent to be indexed, how many are unchanged, and
/// which stored documents of the dropped folders are gone from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DropPlan {
    /// Positions (in the drop) of the files to index: new, or changed since they were indexed.
    pub send: Vec<usize>,
    /// Of `send`, how many replace a document indexed before (changed content).
    pub changed: usize,
    /// Files indexed before with the same content: not sent.
    pub unchanged: usize,
    /// Documents of a dropped folder that the folder no longer holds: to delete.
    pub removed: Vec<String>,
}

/// Plans a drop: `incoming` are the dropped files' names (paths in their folder) and SHA-256s,
/// `stored` what the library holds, `indexed` the document ids the index holds now. A file is
/// unchanged when the library holds its name with the same hash *and* the index holds it (a
/// file stored but never indexed — a cancelled drop, a model switch — is sent again). For each
/// folder of the drop ([`folder_of`]), the stored documents under that folder that the drop does
/// not hold are removed. Two files of the drop with one document id: the last one counts.
pub fn plan_drop(
    incoming: &[(String, String)],
    stored: &[FileRecord],
    indexed: &HashSet<String>,
) -> DropPlan {
    let by_id: HashMap<&str, &FileRecord> = stored.iter().map(|r| (r.doc_id.as_str(), r)).collect();
    let mut plan = DropPlan::default();
    let mut last: HashMap<String, usize> = HashMap::new();
    for (i, (name, _)) in incoming.iter().enumerate() {
        last.insert(user_doc_id(name), i);
    }
    for (i, (name, sha)) in incoming.iter().enumerate() {
        let id = user_doc_id(name);
        if last.get(&id) != Some(&i) {
            continue;
        }
        match by_id.get(id.as_str()) {
            Some(r) if r.sha256 == *sha && indexed.contains(&id) => plan.unchanged += 1,
            Some(_) if indexed.contains(&id) => {
                plan.changed += 1;
                plan.send.push(i);
            }
            _ => plan.send.push(i),
        }
    }
    let folders: HashSet<&str> = incoming.iter().filter_map(|(n, _)| folder_of(n)).collect();
    let dropped: HashSet<String> = last.into_keys().collect();
    plan.removed = stored
        .iter()
        .filter(|r| r.folder().is_some_and(|f| folders.contains(f)) && !dropped.contains(&r.doc_id))
        .map(|r| r.doc_id.clone())
        .collect();
    plan
}

/// The name of the manifest inside an exported library.
pub const MANIFEST: &str = "lightembed-library.json";
/// The folder of the original files inside an exported library.
const FILES: &str = "files/";

/// The manifest of an exported library: what it is and the records of its files (in the zip
/// under `files/` + their `name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    /// Always `"lightembed-library"`.
    kind: String,
    /// Format version (1).
    version: u32,
    /// The language whose index the documents were in (`en`, `tr`).
    lang: String,
    files: Vec<FileRecord>,
}

const KIND: &str = "lightembed-library";

/// The library as one zip file: the manifest ([`MANIFEST`], JSON) and every original file under
/// `files/` (stored, not compressed again: PDFs and zipped formats are compressed already). An
/// importing browser indexes the files again with its model, so the file moves between models
/// and app versions.
///
/// # Errors
/// The zip writer's message (not expected for bytes in memory).
pub fn export_zip(lang: &str, files: &[(FileRecord, Vec<u8>)]) -> Result<Vec<u8>, String> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(files.iter().any(|(_, b)| b.len() as u64 >= u32::MAX as u64));
    let manifest = Manifest {
        kind: KIND.into(),
        version: 1,
        lang: lang.into(),
        files: files.iter().map(|(r, _)| r.clone()).collect(),
    };
    let e = |e: zip::result::ZipError| format!("writing the library file failed: {e}");
    w.start_file(MANIFEST, opts).map_err(e)?;
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| e.to_string())?;
    w.write_all(&json).map_err(|e| e.to_string())?;
    for (r, bytes) in files {
        w.start_file(format!("{FILES}{}", r.name), opts)
            .map_err(e)?;
        w.write_all(bytes).map_err(|e| e.to_string())?;
    }
    Ok(w.finish().map_err(e)?.into_inner())
}

/// The files of a library exported by [`export_zip`]: each record (as the manifest has it, its
/// document id made again from its name) with its bytes, and the manifest's language.
///
/// # Errors
/// What is wrong: not a zip, no manifest, another kind of file, a newer version, a file the
/// manifest names that is missing or whose bytes do not match its SHA-256 (`sha256` computes it).
pub fn import_zip(
    bytes: &[u8],
    sha256: impl Fn(&[u8]) -> String,
) -> Result<(String, Vec<(FileRecord, Vec<u8>)>), String> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("not a library file (not a zip: {e})"))?;
    let manifest: Manifest = {
        let mut f = z
            .by_name(MANIFEST)
            .map_err(|_| format!("not a library file (no {MANIFEST} inside)"))?;
        let mut s = String::new();
        f.read_to_string(&mut s)
            .map_err(|e| format!("{MANIFEST} cannot be read: {e}"))?;
        serde_json::from_str(&s)
            .map_err(|e| format!("{MANIFEST} is not a library manifest: {e}"))?
    };
    if manifest.kind != KIND {
        return Err(format!(
            "not a library file ({MANIFEST} says {:?})",
            manifest.kind
        ));
    }
    if manifest.version != 1 {
        return Err(format!(
            "a library file of version {} (this app reads version 1)",
            manifest.version
        ));
    }
    let mut out = Vec::with_capacity(manifest.files.len());
    for r in manifest.files {
        let mut f = z
            .by_name(&format!("{FILES}{}", r.name))
            .map_err(|_| format!("{}: named in the manifest but missing", r.name))?;
        let mut b = Vec::with_capacity(f.size() as usize);
        f.read_to_end(&mut b)
            .map_err(|e| format!("{}: cannot be read: {e}", r.name))?;
        if sha256(&b) != r.sha256 {
            return Err(format!("{}: its bytes do not match its SHA-256", r.name));
        }
        out.push((FileRecord::new(&r.name, r.sha256, b.len() as u64), b));
    }
    Ok((manifest.lang, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str, sha: &str) -> FileRecord {
        FileRecord::new(name, sha.into(), 10)
    }

    #[test]
    fn a_folder_reads_documents_only() {
        assert_eq!(folder_format("docs/a.PDF"), Ok(Format::Pdf));
        assert_eq!(folder_format("docs/b.docx"), Ok(Format::Docx));
        assert_eq!(folder_format("docs/notes.txt"), Ok(Format::Text));
        assert_eq!(
            folder_format("docs/img/cat.png"),
            Err("not a format the app reads (.png)".into())
        );
        assert_eq!(
            folder_format("docs/Makefile"),
            Err("not a format the app reads (no extension)".into())
        );
        assert_eq!(folder_format("docs/.DS_Store"), Err("a hidden file".into()));
        // Inside a hidden folder below the dropped one: skipped, as the CLI's walk skips it
        // (the 3 files of `boost/examples/libs/math/example/.temps/` in the bench library).
        assert_eq!(
            folder_format("library/boost/example/.temps/test.txt"),
            Err("in a hidden folder (.temps)".into())
        );
        assert_eq!(
            folder_format("docs/.git/notes.md"),
            Err("in a hidden folder (.git)".into())
        );
        // The dropped folder itself may be hidden (the CLI reads a hidden folder it is given).
        assert_eq!(folder_format(".notes/a.md"), Ok(Format::Markdown));
        assert_eq!(folder_format("a.md"), Ok(Format::Markdown));
        // Sphinx's copies of the pages' sources, as the CLI leaves them out by default.
        assert_eq!(
            folder_format("html/_sources/library/os.rst.txt"),
            Err("in a _sources folder (the pages' sources)".into())
        );
        assert_eq!(folder_format("_sources/a.txt"), Ok(Format::Text));
        for path in [
            "docs/img/cat.png",
            "docs/.DS_Store",
            "docs/.git/notes.md",
            "html/_sources/a.txt",
        ] {
            assert!(
                is_expected_skip(&folder_format(path).unwrap_err()),
                "{path}"
            );
        }
        assert!(is_expected_skip(PAGE_SOURCE));
        assert!(!is_expected_skip("the PDF is encrypted with a password"));
    }

    #[test]
    fn a_txt_beside_its_page_is_the_page_source() {
        let paths = [
            "git-doc/git-add.txt",
            "git-doc/git-add.html",
            "git-doc/notes.txt",
            "git-doc/howto/x.TXT",
            "git-doc/howto/x.htm",
            "git-doc/other/git-add.txt",
            "git-doc/Readme.txt",
            "git-doc/readme.html",
        ];
        let mut beside: Vec<usize> = sources_beside_pages(&paths).into_iter().collect();
        beside.sort();
        // Not notes.txt (no page), not other/git-add.txt (the page is in another folder), not
        // Readme.txt (the name differs in case, as the CLI's file check on Linux).
        assert_eq!(beside, [0, 3]);
    }

    #[test]
    fn a_redrop_sends_what_changed_and_removes_what_is_gone() {
        let stored = vec![
            rec("docs/a.pdf", "aa"),
            rec("docs/b.md", "bb"),
            rec("docs/gone.txt", "gg"),
            rec("docs/never-indexed.txt", "nn"),
            rec("other/c.txt", "cc"),
            rec("loose.txt", "ll"),
        ];
        let indexed: HashSet<String> = [
            "docs/a.pdf",
            "docs/b.md",
            "docs/gone.txt",
            "other/c.txt",
            "loose.txt",
        ]
        .iter()
        .map(|n| user_doc_id(n))
        .collect();
        let incoming: Vec<(String, String)> = [
            ("docs/a.pdf", "aa"),             // unchanged
            ("docs/b.md", "b2"),              // changed
            ("docs/new.epub", "ee"),          // new
            ("docs/never-indexed.txt", "nn"), // stored, not indexed: sent again
        ]
        .iter()
        .map(|(n, s)| (n.to_string(), s.to_string()))
        .collect();
        let plan = plan_drop(&incoming, &stored, &indexed);
        assert_eq!(plan.send, vec![1, 2, 3]);
        assert_eq!((plan.changed, plan.unchanged), (1, 1));
        // Only the dropped folder's documents go: not other/ and not a loose file.
        assert_eq!(plan.removed, vec![user_doc_id("docs/gone.txt")]);
        // A loose file dropped again unchanged is not sent, and removes nothing.
        let plan = plan_drop(&[("loose.txt".into(), "ll".into())], &stored, &indexed);
        assert_eq!(
            (plan.send.len(), plan.unchanged, plan.removed.len()),
            (0, 1, 0)
        );
    }

    fn fake_sha(b: &[u8]) -> String {
        format!("{:x}-{}", b.iter().map(|&x| x as u64).sum::<u64>(), b.len())
    }

    #[test]
    fn a_library_survives_export_and_import() {
        let files: Vec<(FileRecord, Vec<u8>)> = [
            ("docs/a.pdf", b"%PDF-1.4 fake".to_vec()),
            ("notes.md", "# Café\n\nText.".as_bytes().to_vec()),
        ]
        .into_iter()
        .map(|(n, b)| (FileRecord::new(n, fake_sha(&b), b.len() as u64), b))
        .collect();
        let zip = export_zip("en", &files).unwrap();
        let (lang, back) = import_zip(&zip, fake_sha).unwrap();
        assert_eq!(lang, "en");
        assert_eq!(back, files);
        assert_eq!(back[0].0.doc_id, "user/docs/a.pdf");
        assert_eq!(back[0].0.format, Format::Pdf);
    }

    #[test]
    fn a_bad_library_file_says_what_is_wrong() {
        let e = import_zip(b"not a zip at all", fake_sha).unwrap_err();
        assert!(e.starts_with("not a library file (not a zip"), "{e}");
        // A zip without the manifest.
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        w.start_file(
            "x.txt",
            zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored),
        )
        .unwrap();
        w.write_all(b"x").unwrap();
        let z = w.finish().unwrap().into_inner();
        assert_eq!(
            import_zip(&z, fake_sha).unwrap_err(),
            format!("not a library file (no {MANIFEST} inside)")
        );
        // Bytes changed after export.
        let b = b"hello".to_vec();
        let files = vec![(FileRecord::new("a.txt", fake_sha(&b), 5), b)];
        let mut zip = export_zip("en", &files).unwrap();
        let at = zip.windows(5).rposition(|w| w == b"hello").unwrap();
        zip[at] = b'j';
        // (The zip's own CRC-32 or the SHA-256 catches it, whichever reads first.)
        let e = import_zip(&zip, fake_sha).unwrap_err();
        assert!(
            e == "a.txt: its bytes do not match its SHA-256"
                || e.starts_with("a.txt: cannot be read"),
            "{e}"
        );
    }
}
