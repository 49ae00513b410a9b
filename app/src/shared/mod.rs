//! What the page and the worker share: the messages between them ([`protocol`]), the app's
//! languages ([`lang`]), the playground's projection ([`pca`]) and browser glue ([`web`]).

pub mod lang;
pub mod pca;
pub mod protocol;
pub mod web;
