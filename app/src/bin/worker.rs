//! The app's Web Worker: owns the engine, the index and storage (see `lightembed_app::worker`).
//! Built by trunk as a `data-type="worker"` binary and started by the UI with
//! `new Worker("./worker_loader.js")`.

/// Counts the heap's live bytes for the progress events (`heap_live`).
#[global_allocator]
static ALLOC: lightembed_app::shared::alloc::Counting = lightembed_app::shared::alloc::Counting;

fn main() {
    lightembed_app::worker::start();
}
