//! What the page and the worker share: the messages between them ([`protocol`]), the app's
//! languages ([`lang`]), the library of a person's own files ([`library`]), the playground's
//! projection ([`pca`]), remote mode's requests and answers ([`remote`]) and browser glue ([`web`]).

pub mod alloc;
pub mod lang;
pub mod library;
pub mod pca;
pub mod protocol;
pub mod remote;
pub mod web;
