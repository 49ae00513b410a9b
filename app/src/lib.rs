//! `lightembed-app`: the Leptos single-page app and its Web Worker.
//!
//! Filled by the app issue; the crate exists so the workspace layout is fixed.
