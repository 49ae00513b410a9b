//! The page (main thread): the Leptos UI ([`ui`]) and its connection to the worker ([`conn`]).

pub mod conn;
pub mod files;
pub mod ui;
