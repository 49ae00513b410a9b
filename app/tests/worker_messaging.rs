//! The worker's message handling in headless Chromium: JSON requests in, JSON events out (the
//! [`lightembed_app::worker::set_sink`] hook captures what would be `postMessage`d), with real
//! fetch (of `blob:` URLs), real verification and real IndexedDB.
//!
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p lightembed-app --target wasm32-unknown-unknown`
#![cfg(target_arch = "wasm32")]

mod common;

use common::{blob_url, passages, sha_hex, unique_db, with_major, Events, MODEL};
use lightembed_app::chunk::Format;
use lightembed_app::protocol::{Event, Request, SearchMode, StorageKind};
use lightembed_app::worker::WorkerApp;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn send(app: &std::rc::Rc<WorkerApp>, req: Request) {
    // Through JSON text, exactly as the UI sends it.
    WorkerApp::handle_json(app, &req.to_json());
}

fn load(url: &str, model: &[u8]) -> Request {
    Request::LoadModel {
        url: url.to_string(),
        sha256: Some(sha_hex(model)),
        no_store: false,
        db_version: None,
    }
}

#[wasm_bindgen_test]
async fn load_index_search_reload_mismatch_reindex() {
    let ev = Events::install();
    let db = unique_db("messaging");
    let url = blob_url(MODEL);

    // 1. Load: storage opens, download progress, verification, ready, empty index.
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let Event::ModelReady { info } = ev
        .wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(!info.from_cache);
    assert_eq!(info.sha256, sha_hex(MODEL));
    assert!(ev.all().iter().any(|e| matches!(
        e,
        Event::Storage {
            kind: StorageKind::Persistent,
            ..
        }
    )));
    assert!(ev
        .all()
        .iter()
        .any(|e| matches!(e, Event::Download { loaded, .. } if *loaded == MODEL.len() as u64)));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;

    // 2. Index 40 passages: progress adds up, the index reports them.
    ev.clear();
    let ps = passages(40);
    send(
        &app,
        Request::IndexPassages {
            passages: ps.clone(),
            dims: None,
        },
    );
    ev.wait("IndexDone", |e| {
        matches!(
            e,
            Event::IndexDone {
                done: 40,
                total: 40,
                cancelled: false,
                ..
            }
        )
    })
    .await;
    let embedded: usize = ev
        .all()
        .iter()
        .map(|e| {
            if let Event::Progress { embedded, .. } = e {
                *embedded
            } else {
                0
            }
        })
        .sum();
    assert_eq!(embedded, 40);
    let Event::Index { state } = ev.wait("Index", |e| matches!(e, Event::Index { .. })).await
    else {
        unreachable!()
    };
    assert_eq!((state.count, state.docs.len()), (40, 3));

    // 3. Search: a passage's own text finds it first; stale ids are echoed.
    ev.clear();
    send(
        &app,
        Request::Search {
            id: 9,
            query: ps[17].text.clone(),
            k: 3,
            // Vector mode: the score is the cosine, 1 for the passage's own text.
            mode: SearchMode::Vector,
        },
    );
    let Event::Results { id, hits, .. } = ev
        .wait("Results", |e| matches!(e, Event::Results { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, 9);
    assert_eq!(hits[0].id, ps[17].id);
    assert!(hits[0].score > 0.999);

    // Persisting happens after IndexDone; give the transaction a moment.
    lightembed_app::web::sleep_ms(300).await;

    // 4. "Reload": a fresh worker state on the same database → model from the cache, index
    //    restored, no embedding.
    ev.clear();
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let Event::ModelReady { info } = ev
        .wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(info.from_cache, "second load comes from IndexedDB");
    let Event::Index { state } = ev
        .wait(
            "restored",
            |e| matches!(e, Event::Index { state } if state.restored),
        )
        .await
    else {
        unreachable!()
    };
    assert_eq!(state.count, 40);
    assert!(
        !ev.all().iter().any(|e| matches!(e, Event::Progress { .. })),
        "no embedding on restore"
    );

    // 5. Delete a document.
    ev.clear();
    send(
        &app,
        Request::DeleteDoc {
            doc_id: "doc1".into(),
        },
    );
    ev.wait(
        "after delete",
        |e| matches!(e, Event::Index { state } if state.count == 40 - 13),
    )
    .await;
    lightembed_app::web::sleep_ms(300).await;

    // 6. A model with the next major version: the spec §8 message; re-index rebuilds from storage.
    ev.clear();
    let major = MODEL[44];
    let bumped = with_major(MODEL, major + 1);
    send(&app, load(&blob_url(&bumped), &bumped));
    let Event::IndexMismatch {
        message,
        stored_passages,
    } = ev
        .wait("mismatch", |e| matches!(e, Event::IndexMismatch { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(message.starts_with("Index was built with "), "{message}");
    assert!(
        message.contains(&format!("but the loaded model is v{}.", major + 1)),
        "{message}"
    );
    assert!(message.ends_with("Re-run `lightembed index`."), "{message}");
    assert_eq!(stored_passages, 27);
    ev.clear();
    send(&app, Request::Reindex { dims: None });
    ev.wait("reindexed", |e| {
        matches!(
            e,
            Event::IndexDone {
                done: 27,
                cancelled: false,
                ..
            }
        )
    })
    .await;

    lightembed_app::worker::set_sink(None);
}

#[wasm_bindgen_test]
async fn corrupted_and_truncated_models_are_rejected_with_the_reason() {
    let ev = Events::install();
    let app = WorkerApp::new(&unique_db("bad-models"));
    let mut bad = MODEL.to_vec();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x5a;
    send(
        &app,
        Request::LoadModel {
            url: blob_url(&bad),
            sha256: None,
            no_store: false,
            db_version: None,
        },
    );
    let Event::ModelFailed { reason } = ev
        .wait("ModelFailed", |e| matches!(e, Event::ModelFailed { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(reason.contains("SHA-256"), "{reason}");
    assert!(!ev
        .all()
        .iter()
        .any(|e| matches!(e, Event::ModelReady { .. })));

    ev.clear();
    send(
        &app,
        Request::LoadModel {
            url: blob_url(&MODEL[..MODEL.len() / 3]),
            sha256: None,
            no_store: false,
            db_version: None,
        },
    );
    let Event::ModelFailed { reason } = ev
        .wait("ModelFailed", |e| matches!(e, Event::ModelFailed { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(reason.contains("verification"), "{reason}");

    // Nothing is loaded: requests that need a model fail cleanly.
    ev.clear();
    send(&app, Request::Tokenize { text: "hi".into() });
    ev.wait(
        "error",
        |e| matches!(e, Event::Error { message } if message.contains("no model")),
    )
    .await;
    lightembed_app::worker::set_sink(None);
}

#[wasm_bindgen_test]
async fn cancel_stops_indexing_and_keeps_what_was_done() {
    let ev = Events::install();
    let app = WorkerApp::new(&unique_db("cancel"));
    send(
        &app,
        Request::LoadModel {
            url: blob_url(MODEL),
            sha256: None,
            no_store: true,
            db_version: None,
        },
    );
    ev.wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    assert!(ev.all().iter().any(|e| matches!(
        e,
        Event::Storage {
            kind: StorageKind::MemoryOnly,
            ..
        }
    )));
    ev.clear();
    let many: Vec<_> = passages(20_000);
    send(
        &app,
        Request::IndexPassages {
            passages: many,
            dims: None,
        },
    );
    ev.wait(
        "progress",
        |e| matches!(e, Event::Progress { done, .. } if *done > 0),
    )
    .await;
    send(&app, Request::Cancel);
    let Event::IndexDone {
        done,
        total,
        cancelled,
        ..
    } = ev
        .wait("IndexDone", |e| matches!(e, Event::IndexDone { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(cancelled);
    assert!(done > 0 && done < total, "{done} of {total}");
    ev.wait(
        "index state",
        |e| matches!(e, Event::Index { state } if state.count == done),
    )
    .await;
    // A search still works on what was indexed (memory-only storage).
    ev.clear();
    send(
        &app,
        Request::Search {
            id: 1,
            query: "quick brown fox".into(),
            k: 5,
            mode: SearchMode::Hybrid,
        },
    );
    let Event::Results { hits, .. } = ev
        .wait("Results", |e| matches!(e, Event::Results { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(hits.len(), 5);
    lightembed_app::worker::set_sink(None);
}

#[wasm_bindgen_test]
async fn playground_requests() {
    let ev = Events::install();
    let app = WorkerApp::new(&unique_db("playground"));
    send(
        &app,
        Request::LoadModel {
            url: blob_url(MODEL),
            sha256: None,
            no_store: true,
            db_version: None,
        },
    );
    ev.wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    send(
        &app,
        Request::Cosine {
            a: "hello world".into(),
            b: "hello world".into(),
            dims: None,
        },
    );
    let Event::Cosine { value, .. } = ev
        .wait("Cosine", |e| matches!(e, Event::Cosine { .. }))
        .await
    else {
        unreachable!()
    };
    assert!((value - 1.0).abs() < 1e-4);
    send(
        &app,
        Request::Tokenize {
            text: "hello".into(),
        },
    );
    let Event::Tokens { tokens } = ev
        .wait("Tokens", |e| matches!(e, Event::Tokens { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(tokens.first().map(|t| t.token.as_str()), Some("[CLS]"));
    assert_eq!(tokens.last().map(|t| t.token.as_str()), Some("[SEP]"));
    send(
        &app,
        Request::IndexPassages {
            passages: passages(30),
            dims: None,
        },
    );
    ev.wait("IndexDone", |e| matches!(e, Event::IndexDone { .. }))
        .await;
    send(
        &app,
        Request::Project {
            query: Some("fox".into()),
            max_points: 10,
        },
    );
    let Event::Projection { points, query, .. } = ev
        .wait("Projection", |e| matches!(e, Event::Projection { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(points.len(), 10);
    assert!(query.is_some());
    // A malformed request is answered with an error, not a crash.
    WorkerApp::handle_json(&app, "{\"type\":\"Nope\"}");
    ev.wait(
        "bad request",
        |e| matches!(e, Event::Error { message } if message.starts_with("bad request")),
    )
    .await;
    lightembed_app::worker::set_sink(None);
}

/// The stale-passages bug, end to end: a dropped document is cut in the worker; dropping an
/// edited, shorter version removes its old higher-numbered passages from the index and from
/// IndexedDB, so a reload restores only the new version. An empty document is an error.
#[wasm_bindgen_test]
async fn an_edited_shorter_document_leaves_no_stale_passages_after_reload() {
    let ev = Events::install();
    let db = unique_db("edited-doc");
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;

    let body: String = (0..40)
        .map(|i| format!("Bed number {i} needs water every morning in summer. "))
        .collect();
    let doc = |content: String| Request::IndexDocument {
        name: "notes.md".into(),
        content,
        format: Format::Markdown,
        dims: None,
    };
    ev.clear();
    send(
        &app,
        doc(format!(
            "# Notes\n\n{body}\n\n## Pests\n\nSlugs eat lettuce.\n"
        )),
    );
    let Event::IndexDone { done: long, .. } = ev
        .wait("IndexDone", |e| matches!(e, Event::IndexDone { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(long >= 3, "{long} passages");
    lightembed_app::web::sleep_ms(300).await;

    ev.clear();
    send(&app, doc("# Notes\n\nShort now.\n".into()));
    ev.wait(
        "one passage left",
        |e| matches!(e, Event::Index { state } if state.count == 1 && state.docs[0].passages == 1),
    )
    .await;
    lightembed_app::web::sleep_ms(300).await;

    // "Reload": a fresh worker state on the same database.
    ev.clear();
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let Event::Index { state } = ev
        .wait(
            "restored",
            |e| matches!(e, Event::Index { state } if state.restored),
        )
        .await
    else {
        unreachable!()
    };
    assert_eq!(state.count, 1);
    assert_eq!(state.docs[0].doc_id, "user/notes.md");
    let storage =
        lightembed_app::storage::Storage::open(&db, lightembed_app::storage::DB_VERSION, || {})
            .await;
    let stored = storage.all_passages().await.unwrap();
    assert_eq!(
        stored.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        ["user/notes.md#notes:1"]
    );
    assert_eq!(stored[0].text, "Short now.");

    send(
        &app,
        Request::IndexDocument {
            name: "empty.html".into(),
            content: "<html><body><p> </p></body></html>".into(),
            format: Format::Html,
            dims: None,
        },
    );
    ev.wait(
        "no text",
        |e| matches!(e, Event::Error { message } if message == "empty.html: no text found"),
    )
    .await;
    lightembed_app::worker::set_sink(None);
}

/// Several files dropped at once arrive as back-to-back requests: each waits for the job before
/// it instead of failing with "Indexing is already running" (seen when indexing is slow).
#[wasm_bindgen_test]
async fn documents_dropped_together_are_all_indexed() {
    let ev = Events::install();
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&unique_db("dropped-together"));
    send(&app, load(&url, MODEL));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;
    ev.clear();
    let body: String = (0..30)
        .map(|i| format!("Line {i} of a long note about the garden and its beds. "))
        .collect();
    for name in ["a.md", "b.md", "c.txt"] {
        send(
            &app,
            Request::IndexDocument {
                name: name.into(),
                content: format!("# {name}\n\n{body}"),
                format: Format::from_name(name),
                dims: None,
            },
        );
    }
    ev.wait(
        "three documents",
        |e| matches!(e, Event::Index { state } if state.docs.len() == 3),
    )
    .await;
    assert!(
        !ev.0
            .borrow()
            .iter()
            .any(|e| matches!(e, Event::Error { .. })),
        "no errors"
    );
    lightembed_app::worker::set_sink(None);
}

/// Issue 15, item 3: "delete all" while a job is embedding — the passages it embedded before the
/// clear are not written back to IndexedDB, so a reload (and a "reindex" from the stored
/// passages) finds nothing.
#[wasm_bindgen_test]
async fn delete_all_while_indexing_leaves_nothing_behind() {
    let ev = Events::install();
    let db = unique_db("clear-while-indexing");
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;
    ev.clear();
    send(
        &app,
        Request::IndexPassages {
            passages: passages(20_000),
            dims: None,
        },
    );
    ev.wait(
        "progress",
        |e| matches!(e, Event::Progress { done, .. } if *done > 0),
    )
    .await;
    send(&app, Request::ClearIndex);
    let Event::IndexDone {
        done, cancelled, ..
    } = ev
        .wait("IndexDone", |e| matches!(e, Event::IndexDone { .. }))
        .await
    else {
        unreachable!()
    };
    assert!(cancelled);
    assert_eq!(done, 0, "nothing of the cleared job is kept");
    lightembed_app::web::sleep_ms(500).await;
    lightembed_app::worker::set_sink(None);

    // "Reload": a fresh worker state on the same database.
    let ev = Events::install();
    let app2 = WorkerApp::new(&db);
    send(&app2, load(&url, MODEL));
    ev.wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    lightembed_app::web::sleep_ms(300).await;
    let count = ev.all().iter().rev().find_map(|e| match e {
        Event::Index { state } => Some(state.count),
        _ => None,
    });
    assert_eq!(count.unwrap_or(0), 0, "no index restored");
    ev.clear();
    send(&app2, Request::Reindex { dims: None });
    lightembed_app::web::sleep_ms(1000).await;
    let brought_back = ev.all().iter().any(|e| {
        matches!(e, Event::Index { state } if state.count > 0)
            || matches!(e, Event::IndexDone { done, .. } if *done > 0)
    });
    assert!(
        !brought_back,
        "reindex found stored passages: {:?}",
        ev.all().len()
    );
    lightembed_app::worker::set_sink(None);
}
