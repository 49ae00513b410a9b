//! The app's Web Worker: owns the engine, the index and storage (see `lightembed_app::worker`).
//! Built by trunk as a `data-type="worker"` binary and started by the UI with
//! `new Worker("./worker_loader.js")`.

fn main() {
    lightembed_app::worker::start();
}
