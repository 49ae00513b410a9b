//! The storage test bodies, shared by `storage.rs` (page) and `storage_in_worker.rs` (worker).
#![allow(dead_code)]

use std::cell::Cell;
use std::rc::Rc;

use lightembed_app::worker::state::SavedIndex;
use lightembed_app::worker::storage::{Storage, DB_VERSION};

use crate::common::{passages, unique_db, write_v1_database};

/// A saved index of `bytes` with the sections `sections`.
fn saved(bytes: &[u8], sections: &str) -> SavedIndex {
    SavedIndex {
        bytes: bytes.to_vec(),
        sections: Some(sections.to_string()),
    }
}

pub async fn models_are_cached_by_url_and_validator() {
    let s = Storage::open(&unique_db("models"), DB_VERSION, || {}).await;
    assert!(
        s.is_persistent(),
        "IndexedDB should open: {:?}",
        s.unavailable_reason()
    );
    assert_eq!(s.get_model("models/a.bin").await.unwrap(), None);
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    s.put_model("models/a.bin", "sha256=ab", &bytes)
        .await
        .unwrap();
    let (v, b) = s.get_model("models/a.bin").await.unwrap().expect("cached");
    assert_eq!(v, "sha256=ab");
    assert_eq!(b, bytes);
    // Replacing keeps one entry per URL.
    s.put_model("models/a.bin", "sha256=cd", &bytes[..10])
        .await
        .unwrap();
    let (v, b) = s.get_model("models/a.bin").await.unwrap().unwrap();
    assert_eq!((v.as_str(), b.len()), ("sha256=cd", 10));
    s.delete_model("models/a.bin").await.unwrap();
    assert_eq!(s.get_model("models/a.bin").await.unwrap(), None);
}

pub async fn passages_and_index_are_saved_together_and_survive_reopening() {
    let name = unique_db("index");
    let s = Storage::open(&name, DB_VERSION, || {}).await;
    assert!(s.is_persistent());
    assert_eq!(s.get_index().await.unwrap(), None);
    let ps = passages(30);
    let index = saved(&[7u8; 4096], r#"{"doc0#0":["Document 0",""]}"#);
    s.save(&ps, &[], Some(&index)).await.unwrap();
    assert_eq!(s.count_passages().await.unwrap(), 30);
    drop(s);

    // A new connection (as after a reload) sees the same data.
    let s = Storage::open(&name, DB_VERSION, || {}).await;
    assert_eq!(s.get_index().await.unwrap(), Some(index));
    let mut back = s.all_passages().await.unwrap();
    back.sort_by(|a, b| a.id().cmp(b.id()));
    let mut want = ps.clone();
    want.sort_by(|a, b| a.id().cmp(b.id()));
    assert_eq!(back, want);

    // Delete some, replace the index.
    let gone: Vec<String> = ps.iter().take(10).map(|p| p.id().to_string()).collect();
    s.save(&[], &gone, Some(&saved(&[1, 2, 3], "{}")))
        .await
        .unwrap();
    assert_eq!(s.count_passages().await.unwrap(), 20);
    assert_eq!(s.get_index().await.unwrap(), Some(saved(&[1, 2, 3], "{}")));
    s.save(&[], &[], None).await.unwrap();
    assert_eq!(s.get_index().await.unwrap(), None);
    s.clear_index().await.unwrap();
    assert_eq!(s.count_passages().await.unwrap(), 0);
}

pub async fn memory_storage_reports_why() {
    let mut s = Storage::memory("disabled for the test");
    assert!(!s.is_persistent());
    assert_eq!(s.unavailable_reason(), Some("disabled for the test"));
    // Reads are empty, writes fail with the reason.
    assert_eq!(s.get_index().await.unwrap(), None);
    assert_eq!(s.all_passages().await.unwrap(), vec![]);
    let e = s.save(&passages(1), &[], None).await.unwrap_err();
    assert!(e.contains("disabled for the test"), "{e}");
    // A persistent storage degrades after a failed write.
    let mut p = Storage::open(&unique_db("degrade"), DB_VERSION, || {}).await;
    p.degrade("quota exceeded");
    assert!(!p.is_persistent());
    s.degrade("x");
    assert_eq!(s.unavailable_reason(), Some("x"));
}

pub async fn a_newer_version_closes_this_connection_and_keeps_the_data() {
    let name = unique_db("versions");
    let told = Rc::new(Cell::new(false));
    let t2 = told.clone();
    let old = Storage::open(&name, DB_VERSION, move || t2.set(true)).await;
    assert!(old.is_persistent());
    old.save(&passages(5), &[], Some(&saved(&[9; 16], "{}")))
        .await
        .unwrap();
    // A newer schema opens (another tab of a newer deployment): the old connection is told and
    // closes at once, so the upgrade is not blocked; the data is kept.
    let new = Storage::open(&name, DB_VERSION + 1, || {}).await;
    assert!(new.is_persistent(), "{:?}", new.unavailable_reason());
    assert!(told.get(), "the old connection was told");
    assert_eq!(new.count_passages().await.unwrap(), 5);
    assert_eq!(new.get_index().await.unwrap(), Some(saved(&[9; 16], "{}")));
    // An older build meeting the newer schema: memory-only, saying to reload.
    let older = Storage::open(&name, DB_VERSION, || {}).await;
    assert!(!older.is_persistent());
    let why = older.unavailable_reason().unwrap();
    assert!(
        why.contains("newer version of this app has upgraded"),
        "{why}"
    );
}

/// A database the app wrote before storage version 2 (version 1: passages with the page title in
/// `title`, index bytes without sections) opens in this version with its data: the passages read
/// in ingestion's shape (display title by ingestion's rule, page title and heading apart, a page
/// title holding `›` kept whole), the index comes back without sections (so the worker offers a
/// rebuild instead of reading its `Page › Heading` titles), and the next save stores both.
pub async fn a_database_of_the_first_version_is_read_in_this_shape() {
    assert_eq!(DB_VERSION, 2);
    let name = unique_db("v1");
    let v1 = [
        r#"{"id":"rust-book/a.html#heap:1","doc_id":"rust-book/a.html","title":"Memory › Ownership","heading":"The Heap","url":"https://example.invalid/a.html#heap","text":"Data lives here."}"#,
        r#"{"id":"user/n.txt#1","doc_id":"user/n.txt","title":"n.txt","heading":"","url":"","text":"Plain notes."}"#,
    ];
    write_v1_database(&name, &v1, Some(&[5u8; 8])).await;
    let s = Storage::open(&name, DB_VERSION, || {}).await;
    assert!(s.is_persistent(), "{:?}", s.unavailable_reason());
    let mut ps = s.all_passages().await.unwrap();
    ps.sort_by(|a, b| a.id().cmp(b.id()));
    let got: Vec<(&str, &str, &str, &str, &str)> = ps
        .iter()
        .map(|p| {
            let i = &p.passage;
            (
                p.id(),
                i.title.as_str(),
                i.page_title.as_str(),
                i.heading.as_str(),
                p.embed_text(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "rust-book/a.html#heap:1",
                "The Heap — Memory › Ownership",
                "Memory › Ownership",
                "The Heap",
                "The Heap\nData lives here."
            ),
            ("user/n.txt#1", "n.txt", "n.txt", "", "Plain notes."),
        ]
    );
    assert_eq!(ps[0].doc_id, "rust-book/a.html");
    assert_eq!(
        s.get_index().await.unwrap(),
        Some(SavedIndex {
            bytes: vec![5u8; 8],
            sections: None
        })
    );
    // Saved again (as a re-index does): this version's shape throughout.
    let index = saved(&[6u8; 8], r#"{"user/n.txt#1":["n.txt",""]}"#);
    s.save(&ps, &[], Some(&index)).await.unwrap();
    assert_eq!(s.get_index().await.unwrap(), Some(index));
    let mut back = s.all_passages().await.unwrap();
    back.sort_by(|a, b| a.id().cmp(b.id()));
    assert_eq!(back, ps);
}
