//! The worker's message handling in headless Chromium: JSON requests in, JSON events out (the
//! [`lightembed_app::worker::set_sink`] hook captures what would be `postMessage`d), with real
//! fetch (of `blob:` URLs), real verification and real IndexedDB.
//!
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p lightembed-app --target wasm32-unknown-unknown`
#![cfg(target_arch = "wasm32")]

mod common;

use common::{
    blob_url, passage, passages, sha_hex, unique_db, with_major, with_model_id, write_v1_database,
    Events, MODEL,
};
use lightembed_app::shared::protocol::{Event, Request, SearchMode, StorageKind};
use lightembed_app::worker::chunk::Format;
use lightembed_app::worker::WorkerApp;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn send(app: &std::rc::Rc<WorkerApp>, req: Request) {
    // Through JSON text, exactly as the UI sends it.
    WorkerApp::handle_json(app, &req.to_json());
}

fn load(url: &str, model: &[u8]) -> Request {
    load_in(url, model, None)
}

/// Loads the model at `url` with storage in memory only (`?nostore`), its SHA-256 unchecked.
fn load_in_memory(url: &str) -> Request {
    Request::LoadModel {
        url: url.to_string(),
        sha256: None,
        no_store: true,
        db_version: None,
        lang: None,
        workers: None,
    }
}

/// The test model as an English and a Turkish one (`model_id`s `lightembed-en-0l`,
/// `lightembed-tr-0l`: each language's own database) and their `blob:` URLs.
fn language_models() -> (Vec<u8>, Vec<u8>, String, String) {
    let en = with_model_id(MODEL, "lightembed-en-0l");
    let tr = with_model_id(MODEL, "lightembed-tr-0l");
    let (en_url, tr_url) = (blob_url(&en), blob_url(&tr));
    (en, tr, en_url, tr_url)
}

/// Loads `model` from `url` for language `lang` (its own database, `lang::db_name`).
fn load_in(url: &str, model: &[u8], lang: Option<&str>) -> Request {
    Request::LoadModel {
        url: url.to_string(),
        sha256: Some(sha_hex(model)),
        no_store: false,
        db_version: None,
        lang: lang.map(str::to_string),
        workers: None,
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
    let state = ev.index_state("Index", |_| true).await;
    assert_eq!((state.count, state.docs.len()), (40, 3));

    // 3. Search: a passage's own text finds it first; stale ids are echoed.
    ev.clear();
    send(
        &app,
        Request::Search {
            id: 9,
            query: ps[17].passage.text.clone(),
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
    assert_eq!(hits[0].id, ps[17].id());
    assert!(hits[0].score > 0.999);

    // Persisting happens after IndexDone; give the transaction a moment.
    lightembed_app::shared::web::sleep_ms(300).await;

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
    let state = ev.index_state("restored", |state| state.restored).await;
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
    lightembed_app::shared::web::sleep_ms(300).await;

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
            lang: None,
            workers: None,
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
            lang: None,
            workers: None,
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
    send(&app, load_in_memory(&blob_url(MODEL)));
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
    send(&app, load_in_memory(&blob_url(MODEL)));
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
    lightembed_app::shared::web::sleep_ms(300).await;

    ev.clear();
    send(&app, doc("# Notes\n\nShort now.\n".into()));
    ev.wait(
        "one passage left",
        |e| matches!(e, Event::Index { state } if state.count == 1 && state.docs[0].passages == 1),
    )
    .await;
    lightembed_app::shared::web::sleep_ms(300).await;

    // "Reload": a fresh worker state on the same database.
    ev.clear();
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let state = ev.index_state("restored", |state| state.restored).await;
    assert_eq!(state.count, 1);
    assert_eq!(state.docs[0].doc_id, "user/notes.md");
    let storage = lightembed_app::worker::storage::Storage::open(
        &db,
        lightembed_app::worker::storage::DB_VERSION,
        || {},
    )
    .await;
    let stored = storage.all_passages().await.unwrap();
    assert_eq!(
        stored.iter().map(|p| p.id()).collect::<Vec<_>>(),
        ["user/notes.md#notes:1"]
    );
    assert_eq!(stored[0].passage.text, "Short now.");

    send(
        &app,
        Request::IndexDocument {
            name: "empty.html".into(),
            content: "<html><body><p> </p></body></html>".into(),
            format: Format::Html,
            dims: None,
        },
    );
    // Named as skipped, with its reason (the page shows "empty.html: no text found").
    ev.wait(
        "no text",
        |e| matches!(e, Event::Skipped { name, reason, rule } if name == "empty.html" && reason == "no text found" && rule == "empty"),
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

/// A drop of many files is saved in batches (at most once a second while documents wait, and
/// when the last one is done): after a "reload" every document is there, with its passages.
#[wasm_bindgen_test]
async fn a_drop_of_many_files_is_saved_whole() {
    let ev = Events::install();
    let db = unique_db("many-files");
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;
    ev.clear();
    let docs: Vec<_> = (0..120)
        .map(|i| {
            lightembed_app::shared::protocol::DocumentInput::text(
                format!("note-{i:03}.txt"),
                format!("Note {i} is about the garden bed number {i} and its roses."),
                Format::from_name("note.txt"),
            )
        })
        .collect();
    send(&app, Request::IndexDocuments { docs, dims: None });
    let state = ev
        .index_state("120 documents", |state| state.docs.len() == 120)
        .await;
    let count = state.count;
    lightembed_app::shared::web::sleep_ms(500).await;
    assert!(
        !ev.all().iter().any(|e| matches!(e, Event::Error { .. })),
        "{:?}",
        ev.all()
    );
    lightembed_app::worker::set_sink(None);

    // "Reload": a fresh worker state on the same database.
    let ev = Events::install();
    let app2 = WorkerApp::new(&db);
    send(&app2, load(&url, MODEL));
    let state = ev.index_state("restored", |state| state.restored).await;
    assert_eq!(state.count, count);
    assert_eq!(state.docs.len(), 120);
    assert!(state
        .docs
        .iter()
        .any(|d| d.doc_id.ends_with("note-007.txt")));
    // The passages were saved with the index: a re-index from storage finds them all.
    ev.clear();
    send(&app2, Request::Reindex { dims: None });
    let Event::IndexDone { done, .. } = ev
        .wait("reindexed", |e| matches!(e, Event::IndexDone { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(done, count);
    lightembed_app::worker::set_sink(None);
}

/// A switch to another language and straight back while a job runs: the second load waits for
/// the first to save the stopped job into its database and to step aside, so this language's index
/// comes back whole, what is indexed next lands in its own database, and the other language's
/// index is untouched (the adversarial pass of the batched saves found both broken).
#[wasm_bindgen_test]
async fn a_quick_switch_away_and_back_keeps_each_index_to_its_language() {
    let ev = Events::install();
    let db = unique_db("quick-switch");
    let (en, tr, en_url, tr_url) = language_models();
    let app = WorkerApp::new(&db);
    // Türkçe first: three passages of its own.
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    ev.ready_state("Turkish ready", |_| true).await;
    let mut tr_ps = passages(3);
    for p in &mut tr_ps {
        p.doc_id = format!("tr-{}", p.doc_id);
        p.passage.id = format!("tr-{}", p.passage.id);
    }
    send(
        &app,
        Request::IndexPassages {
            passages: tr_ps,
            dims: None,
        },
    );
    ev.wait("Turkish indexed", |e| {
        matches!(e, Event::IndexDone { done: 3, .. })
    })
    .await;
    // English: a long job, and while it runs a switch to Türkçe and at once back.
    ev.clear();
    send(&app, load_in(&en_url, &en, Some("en")));
    ev.ready_state("English ready", |_| true).await;
    send(
        &app,
        Request::IndexPassages {
            passages: passages(20_000),
            dims: None,
        },
    );
    ev.wait(
        "English progress",
        |e| matches!(e, Event::Progress { done, .. } if *done > 0),
    )
    .await;
    ev.clear();
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    // A file dropped at the switch: no model until the next one is ready ("no model is
    // loaded"), and its end must not save the stopped job's writes without their index.
    send(
        &app,
        Request::IndexDocuments {
            docs: vec![lightembed_app::shared::protocol::DocumentInput::text(
                "during.txt",
                "A note dropped during the switch.",
                Format::from_name("during.txt"),
            )],
            dims: None,
        },
    );
    lightembed_app::shared::web::sleep_ms(10).await;
    send(&app, load_in(&en_url, &en, Some("en")));
    let state = ev
        .index_state("English restored", |state| state.restored)
        .await;
    let kept = state.count;
    assert!(kept > 0, "the stopped English job kept what it had done");
    assert!(
        ev.all().iter().all(|e| match e {
            Event::Error { message } => message == "during.txt: no model is loaded",
            _ => true,
        }),
        "{:?}",
        ev.all()
    );
    // What is indexed now goes into the English database.
    let mut more = passages(3);
    for p in &mut more {
        p.doc_id = format!("more-{}", p.doc_id);
        p.passage.id = format!("more-{}", p.passage.id);
    }
    ev.clear();
    send(
        &app,
        Request::IndexPassages {
            passages: more,
            dims: None,
        },
    );
    ev.wait("three more", |e| {
        matches!(e, Event::IndexDone { done: 3, .. })
    })
    .await;
    lightembed_app::worker::set_sink(None);

    // "Reload": each database holds its own language's passages.
    let ev = Events::install();
    let app = WorkerApp::new(&db);
    send(&app, load_in(&en_url, &en, Some("en")));
    let state = ev.ready_state("English after reload", |_| true).await;
    assert_eq!(state.count, kept + 3);
    assert!(state.docs.iter().all(|d| !d.doc_id.starts_with("tr-")));
    ev.clear();
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    let state = ev.ready_state("Turkish after reload", |_| true).await;
    assert_eq!(state.count, 3);
    assert!(state.docs.iter().all(|d| d.doc_id.starts_with("tr-")));
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
    lightembed_app::shared::web::sleep_ms(500).await;
    lightembed_app::worker::set_sink(None);

    // "Reload": a fresh worker state on the same database.
    let ev = Events::install();
    let app2 = WorkerApp::new(&db);
    send(&app2, load(&url, MODEL));
    ev.wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    lightembed_app::shared::web::sleep_ms(300).await;
    let count = ev.all().iter().rev().find_map(|e| match e {
        Event::Index { state } => Some(state.count),
        _ => None,
    });
    assert_eq!(count.unwrap_or(0), 0, "no index restored");
    ev.clear();
    send(&app2, Request::Reindex { dims: None });
    lightembed_app::shared::web::sleep_ms(1000).await;
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

/// Issue 16: each language keeps its own index (its own database), so a Turkish model never meets
/// the English index (no §8 mismatch to re-embed it into) and switching back restores the other
/// index without embedding; a switch while indexing, or right after a request, puts nothing of
/// one language's passages into the other's index; and an index for a Turkish model has no
/// English stemming on its keyword side.
#[wasm_bindgen_test]
async fn each_language_keeps_its_own_index_and_a_switch_mixes_nothing() {
    let ev = Events::install();
    let db = unique_db("languages");
    let (en, tr, en_url, tr_url) = language_models();
    let keyword_hits = |ev: &Events, app: &std::rc::Rc<WorkerApp>, id: u64, q: &str| {
        let (ev, app, q) = (ev.clone(), app.clone(), q.to_string());
        async move {
            send(
                &app,
                Request::Search {
                    id,
                    query: q,
                    k: 10,
                    mode: SearchMode::Keyword,
                },
            );
            let Event::Results { hits, .. } = ev
                .wait(
                    "Results",
                    |e| matches!(e, Event::Results { id: i, .. } if *i == id),
                )
                .await
            else {
                unreachable!()
            };
            hits.into_iter().map(|h| h.id).collect::<Vec<_>>()
        }
    };
    let doc_ids = |state: &lightembed_app::shared::protocol::IndexState| -> Vec<String> {
        state.docs.iter().map(|d| d.doc_id.clone()).collect()
    };

    // English: six passages, one of them about a "reference".
    let app = WorkerApp::new(&db);
    send(&app, load_in(&en_url, &en, Some("en")));
    ev.ready_state("English ready", |s| s.count == 0).await;
    let mut en_ps = passages(6);
    en_ps[0] = common::with_text(
        &en_ps[0],
        "Every reference is checked by the borrow checker.",
    );
    ev.clear();
    send(
        &app,
        Request::IndexPassages {
            passages: en_ps.clone(),
            dims: None,
        },
    );
    ev.wait("English indexed", |e| {
        matches!(
            e,
            Event::IndexDone {
                done: 6,
                cancelled: false,
                ..
            }
        )
    })
    .await;
    lightembed_app::shared::web::sleep_ms(300).await;

    // Türkçe: its own database — an empty index, no §8 mismatch with the English one.
    ev.clear();
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    ev.ready_state("Turkish ready", |s| s.count == 0).await;
    assert!(
        !ev.all()
            .iter()
            .any(|e| matches!(e, Event::IndexMismatch { .. })),
        "{:?}",
        ev.all()
    );
    let tr_ps: Vec<_> = (0..3)
        .map(|i| {
            passage(
                &format!("belge{i}"),
                &format!("belge{i}#{i}"),
                &format!("Belge {i}"),
                "",
                "",
                &format!("Sayfa numaraları {i}: her reference denetlenir."),
            )
        })
        .collect();
    ev.clear();
    send(
        &app,
        Request::IndexPassages {
            passages: tr_ps.clone(),
            dims: None,
        },
    );
    ev.wait("Turkish indexed", |e| {
        matches!(
            e,
            Event::IndexDone {
                done: 3,
                cancelled: false,
                ..
            }
        )
    })
    .await;
    // No English stemming for a Turkish model: "references" is not "reference" here.
    assert_eq!(
        keyword_hits(&ev, &app, 1, "references").await,
        Vec::<String>::new()
    );
    assert_eq!(keyword_hits(&ev, &app, 2, "reference").await.len(), 3);
    lightembed_app::shared::web::sleep_ms(300).await;

    // A switch to English while Turkish passages are being indexed: the English index is as it
    // was; the Turkish job stops and keeps what it had done (as a cancel does) in the Turkish
    // database, saved before the switch.
    ev.clear();
    let many: Vec<_> = (0..20_000)
        .map(|i| {
            passage(
                "uzun",
                &format!("uzun#{i}"),
                "Uzun",
                "",
                "",
                &format!("paragraf {i}"),
            )
        })
        .collect();
    send(
        &app,
        Request::IndexPassages {
            passages: many,
            dims: None,
        },
    );
    ev.wait(
        "Turkish progress",
        |e| matches!(e, Event::Progress { done, .. } if *done > 0),
    )
    .await;
    ev.clear();
    send(&app, load_in(&en_url, &en, Some("en")));
    let state = ev.ready_state("English restored", |s| s.count == 6).await;
    assert!(state.restored);
    let mut want: Vec<String> = vec!["doc0".into(), "doc1".into(), "doc2".into()];
    assert_eq!(doc_ids(&state), want);
    // English stemming here: "references" finds the "reference" passage.
    assert_eq!(
        keyword_hits(&ev, &app, 3, "references").await,
        [en_ps[0].id().to_string()]
    );
    assert!(
        !ev.all()
            .iter()
            .any(|e| matches!(e, Event::Progress { .. } | Event::IndexDone { .. })),
        "the Turkish job stopped at the switch: {:?}",
        ev.all()
    );

    // A request sent just before a switch (its job would start after it) does nothing: these
    // English passages must not land in the Turkish index.
    ev.clear();
    send(
        &app,
        Request::IndexPassages {
            passages: passages(9),
            dims: None,
        },
    );
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    ev.wait("Turkish ready", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    let state = ev
        .index_state("Turkish restored", |state| state.restored)
        .await;
    let tr_count = state.count;
    assert!(
        (4..20_003).contains(&tr_count),
        "three passages and part of the stopped job: {tr_count}"
    );
    let mut got = doc_ids(&state);
    got.sort();
    assert_eq!(got, ["belge0", "belge1", "belge2", "uzun"]);
    lightembed_app::shared::web::sleep_ms(500).await;
    assert!(
        !ev.all()
            .iter()
            .any(|e| matches!(e, Event::Progress { .. } | Event::IndexDone { .. })),
        "{:?}",
        ev.all()
    );

    // "Reload": both databases hold their own language's index.
    ev.clear();
    let app = WorkerApp::new(&db);
    send(&app, load_in(&tr_url, &tr, Some("tr")));
    let state = ev
        .ready_state("Turkish after reload", |s| s.count == tr_count)
        .await;
    assert!(state.restored);
    ev.clear();
    send(&app, load_in(&en_url, &en, Some("en")));
    let state = ev
        .ready_state("English after reload", |s| s.count == 6)
        .await;
    want.sort();
    let mut got = doc_ids(&state);
    got.sort();
    assert_eq!(got, want);
    lightembed_app::worker::set_sink(None);
}

/// Storage version 2: an index the app saved before it (payload titles `Page › Heading`, no page
/// titles apart, passages with the page title in `title`) is never shown with those titles:
/// loading offers a rebuild with a clear message, the re-index rebuilds it from the stored
/// passages, results are then titled by ingestion's rule (`Heading — Page`) and the document
/// list shows page titles kept apart (one holding `›` too), and a reload restores it as it is.
#[wasm_bindgen_test]
async fn an_index_saved_by_the_first_storage_version_is_rebuilt_with_ingestions_titles() {
    use lightembed_app::worker::state::{load_model, WorkerState, OLD_APP_INDEX};
    let ev = Events::install();
    let db = unique_db("v1-app");
    // The old app's index of the same model, titled its way.
    let old_bytes = {
        let (m, info) = load_model(MODEL, "m", None).unwrap();
        let mut c = WorkerState::new();
        c.set_model(m, info);
        c.ensure_index(None).unwrap();
        let p = passage(
            "rust-book/a.html",
            "rust-book/a.html#heap:1",
            "Memory › Ownership › The Heap",
            "",
            "",
            "Data lives here.",
        );
        let v = c.embed_passages(std::slice::from_ref(&p)).unwrap();
        c.insert(&p, &v[0]).unwrap();
        c.index_bytes().unwrap()
    };
    let v1 = [
        r#"{"id":"rust-book/a.html#heap:1","doc_id":"rust-book/a.html","title":"Memory › Ownership","heading":"The Heap","url":"https://example.invalid/a.html#heap","text":"Data lives here."}"#,
        r#"{"id":"user/n.txt#1","doc_id":"user/n.txt","title":"n.txt","heading":"","url":"","text":"Plain notes about soil."}"#,
    ];
    write_v1_database(&db, &v1, Some(&old_bytes)).await;
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let Event::IndexMismatch {
        message,
        stored_passages,
    } = ev
        .wait("mismatch", |e| matches!(e, Event::IndexMismatch { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!((message.as_str(), stored_passages), (OLD_APP_INDEX, 2));
    assert!(
        !ev.all()
            .iter()
            .any(|e| matches!(e, Event::Index { state } if state.count > 0)),
        "the old index is not shown"
    );

    ev.clear();
    send(&app, Request::Reindex { dims: None });
    ev.wait("reindexed", |e| {
        matches!(
            e,
            Event::IndexDone {
                done: 2,
                cancelled: false,
                ..
            }
        )
    })
    .await;
    let docs = |state: &lightembed_app::shared::protocol::IndexState| -> Vec<(String, String)> {
        state
            .docs
            .iter()
            .map(|d| (d.doc_id.clone(), d.title.clone()))
            .collect()
    };
    let want = vec![
        (
            "rust-book/a.html".to_string(),
            "Memory › Ownership".to_string(),
        ),
        ("user/n.txt".to_string(), "n.txt".to_string()),
    ];
    let state = ev.index_state("rebuilt", |s| s.count == 2).await;
    assert_eq!(docs(&state), want);
    send(
        &app,
        Request::Search {
            id: 1,
            query: "heap".into(),
            k: 3,
            mode: SearchMode::Keyword,
        },
    );
    let Event::Results { hits, .. } = ev
        .wait("Results", |e| matches!(e, Event::Results { id: 1, .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(hits[0].id, "rust-book/a.html#heap:1");
    assert_eq!(hits[0].title, "The Heap — Memory › Ownership");

    // "Reload": restored as saved, no mismatch, the same titles.
    lightembed_app::shared::web::sleep_ms(300).await;
    ev.clear();
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    let state = ev.index_state("restored", |s| s.restored).await;
    assert_eq!(docs(&state), want);
    assert!(!ev
        .all()
        .iter()
        .any(|e| matches!(e, Event::IndexMismatch { .. })));
    send(
        &app,
        Request::Search {
            id: 2,
            query: "heap".into(),
            k: 3,
            mode: SearchMode::Keyword,
        },
    );
    let Event::Results { hits, .. } = ev
        .wait("Results", |e| matches!(e, Event::Results { id: 2, .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(hits[0].title, "The Heap — Memory › Ownership");
    lightembed_app::worker::set_sink(None);
}

/// Documents of the binary formats arrive as `{json, buffers}` (the page's message with the
/// file bytes transferred): a real PDF's passages keep their page (URL `#page=N`, what a result
/// opens the stored file at), Word/OpenDocument/EPUB are indexed, each bad PDF is `Skipped`
/// with its reason while the rest of the drop is indexed, and the text view gets a document's
/// passages in order.
#[wasm_bindgen_test]
async fn binary_documents_arrive_as_bytes_and_bad_pdfs_are_named() {
    use lightembed_app::shared::protocol::{DocumentInput, BUFFERS_KEY, JSON_KEY};
    macro_rules! fixture {
        ($name:literal) => {
            (
                $name,
                include_bytes!(concat!("../../tests/fixtures/documents/", $name)).as_slice(),
            )
        };
    }
    let ev = Events::install();
    let db = unique_db("binary-docs");
    let url = blob_url(MODEL);
    let app = WorkerApp::new(&db);
    send(&app, load(&url, MODEL));
    ev.wait(
        "empty index",
        |e| matches!(e, Event::Index { state } if state.count == 0),
    )
    .await;
    let files = [
        fixture!("lbxalg.pdf"),
        fixture!("encrypted.pdf"),
        fixture!("guide.docx"),
        fixture!("scanned.pdf"),
        fixture!("guide.odt"),
        fixture!("broken.pdf"),
        fixture!("guide.epub"),
    ];
    let docs: Vec<DocumentInput> = files
        .iter()
        .enumerate()
        .map(|(i, (name, _))| DocumentInput {
            buffer: Some(i),
            ..DocumentInput::text(*name, "", Format::from_name(name))
        })
        .collect();
    let req = Request::IndexDocuments { docs, dims: None };
    let msg = js_sys::Object::new();
    let buffers: js_sys::Array = files
        .iter()
        .map(|(_, b)| js_sys::Uint8Array::from(*b).buffer())
        .collect();
    js_sys::Reflect::set(&msg, &JSON_KEY.into(), &req.to_json().into()).unwrap();
    js_sys::Reflect::set(&msg, &BUFFERS_KEY.into(), &buffers).unwrap();
    ev.clear();
    WorkerApp::handle_value(&app, &msg.into());
    let state = ev
        .index_state("four documents", |s| s.docs.len() == 4)
        .await;
    let ids: Vec<&str> = state.docs.iter().map(|d| d.doc_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "user/lbxalg.pdf",
            "user/guide.docx",
            "user/guide.odt",
            "user/guide.epub"
        ]
    );
    let skipped: Vec<(String, String)> = ev
        .all()
        .into_iter()
        .filter_map(|e| match e {
            Event::Skipped { name, rule, .. } => Some((name, rule)),
            _ => None,
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("encrypted.pdf".to_string(), "encrypted".to_string()),
            ("scanned.pdf".into(), "no-text".into()),
            ("broken.pdf".into(), "broken".into()),
        ]
    );
    // The PDF passage is found at its page.
    ev.clear();
    send(
        &app,
        Request::Search {
            id: 9,
            query: "CCITT Group 4 2D compression algorithm".into(),
            k: 3,
            mode: SearchMode::Keyword,
        },
    );
    let Event::Results { hits, .. } = ev
        .wait("results", |e| matches!(e, Event::Results { id: 9, .. }))
        .await
    else {
        unreachable!()
    };
    assert!(hits[0].id.starts_with("user/lbxalg.pdf#"), "{}", hits[0].id);
    assert_eq!(hits[0].url, "#page=3");
    assert_eq!(lightembed_ingest::pdf_page(&hits[0].url), Some(3));
    // The text view: the document's passages in order, pages kept.
    ev.clear();
    send(
        &app,
        Request::DocText {
            doc_id: "user/lbxalg.pdf".into(),
        },
    );
    let Event::DocText { passages, .. } = ev
        .wait("doc text", |e| matches!(e, Event::DocText { .. }))
        .await
    else {
        unreachable!()
    };
    let pages: Vec<u32> = passages.iter().filter_map(|p| p.page).collect();
    assert_eq!(pages.len(), passages.len());
    assert!(
        pages.windows(2).all(|w| w[0] <= w[1]) && pages.contains(&3),
        "{pages:?}"
    );
    assert!(passages.iter().any(|p| p.id == hits[0].id));
    lightembed_app::worker::set_sink(None);
}

/// Remote mode in the worker (`Request::RemoteSearch`): before a model is loaded the search is
/// refused in words; with a model the query is embedded and sent, and a server that cannot be
/// reached is said in words — both as `RemoteFailed` carrying the request's id. (Port 9 is one
/// the browser never connects to, so the request fails whatever runs on this machine.)
#[wasm_bindgen_test]
async fn remote_search_failures_are_said_in_words() {
    let ev = Events::install();
    let app = WorkerApp::new(&unique_db("remote"));
    let remote = |id: u64| Request::RemoteSearch {
        id,
        query: "ownership <b>rules</b>".into(),
        k: 5,
        serve: "http://127.0.0.1:9/".into(),
        dims: Some(999),
    };
    send(&app, remote(1));
    let e = ev
        .wait("RemoteFailed 1", |e| {
            matches!(e, Event::RemoteFailed { id: 1, .. })
        })
        .await;
    assert_eq!(
        e,
        Event::RemoteFailed {
            id: 1,
            message: "The query could not be embedded: no model is loaded".into()
        }
    );
    send(&app, load_in_memory(&blob_url(MODEL)));
    ev.wait("ModelReady", |e| matches!(e, Event::ModelReady { .. }))
        .await;
    // dims 999 is not the model's: the query is embedded at its output_dim (the server would
    // refuse it with the §8 message); here no server answers at all.
    send(&app, remote(2));
    let e = ev
        .wait("RemoteFailed 2", |e| {
            matches!(e, Event::RemoteFailed { id: 2, .. })
        })
        .await;
    let origin = lightembed_app::shared::web::location_origin();
    assert!(origin.starts_with("http"), "{origin}");
    assert_eq!(
        e,
        Event::RemoteFailed {
            id: 2,
            message: format!(
                "Search is unavailable: the search server http://127.0.0.1:9 could not be reached: \
                 it is not running, or its --cors-origin does not list {origin}."
            )
        }
    );
    assert!(!ev
        .all()
        .iter()
        .any(|e| matches!(e, Event::RemoteResults { .. } | Event::Panic { .. })));
}
