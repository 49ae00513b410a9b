//! Browser glue shared by the UI and the worker: `fetch` (with streaming progress), a HEAD-based
//! cache validator, timers and `performance.now()`. Works in a window and in a dedicated worker
//! (everything goes through the global scope).

use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request, RequestCache, RequestInit, Response};

/// Milliseconds from `performance.now()` (0 if unavailable).
pub fn now_ms() -> f64 {
    Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Bytes of this instance's WebAssembly linear memory (`memory.buffer.byteLength`). Linear
/// memory only grows, so this is the heap's high-water mark, in bytes (≤ 4 GiB on wasm32).
pub fn heap_bytes() -> u64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0, |b| b.byte_length() as u64)
}

/// Resolves after `ms` milliseconds (`setTimeout` on the global scope). `sleep_ms(0)` yields to
/// the event loop so queued messages (e.g. a cancel) are handled.
pub async fn sleep_ms(ms: i32) {
    let promise = Promise::new(&mut |resolve, _reject| {
        let global = js_sys::global();
        if let Ok(f) = Reflect::get(&global, &JsValue::from_str("setTimeout")) {
            if let Some(f) = f.dyn_ref::<js_sys::Function>() {
                let _ = f.call2(&global, &resolve, &JsValue::from(ms));
                return;
            }
        }
        let _ = resolve.call0(&JsValue::NULL);
    });
    let _ = JsFuture::from(promise).await;
}

/// Yields to the event loop once, so queued messages (a cancel, a search, a helper's vectors) are
/// handled, without `setTimeout`'s clamping (nested timeouts wait ≥ 4 ms): a message posted to a
/// fresh `MessageChannel`. Falls back to [`sleep_ms`]`(0)`.
pub async fn yield_now() {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return sleep_ms(0).await;
    };
    let promise = Promise::new(&mut |resolve, _reject| {
        channel.port1().set_onmessage(Some(&resolve));
        if channel.port2().post_message(&JsValue::NULL).is_err() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
    channel.port1().set_onmessage(None);
    channel.port1().close();
}

/// A human-readable message from a thrown JS value.
pub fn js_error(v: &JsValue) -> String {
    if let Some(e) = v.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    if let Some(s) = v.as_string() {
        return s;
    }
    if let Ok(m) = Reflect::get(v, &JsValue::from_str("message")) {
        if let Some(s) = m.as_string() {
            return s;
        }
    }
    format!("{v:?}")
}

/// `fetch(req)` of the page's window or of the worker's scope, whichever `global` is.
fn fetch_in(global: &js_sys::Object, req: &Request) -> js_sys::Promise {
    if let Some(w) = global.dyn_ref::<web_sys::Window>() {
        w.fetch_with_request(req)
    } else {
        global
            .unchecked_ref::<web_sys::WorkerGlobalScope>()
            .fetch_with_request(req)
    }
}

async fn fetch(url: &str, method: &str, cache: RequestCache) -> Result<Response, String> {
    let init = RequestInit::new();
    init.set_method(method);
    init.set_cache(cache);
    let req = Request::new_with_str_and_init(url, &init).map_err(|e| js_error(&e))?;
    let global = js_sys::global();
    let promise = fetch_in(&global, &req);
    let resp = JsFuture::from(promise)
        .await
        .map_err(|e| format!("network error fetching {url}: {}", js_error(&e)))?;
    let resp: Response = resp
        .dyn_into()
        .map_err(|_| "fetch did not return a Response".to_string())?;
    if !resp.ok() {
        return Err(format!(
            "HTTP {} {} for {url}",
            resp.status(),
            resp.status_text()
        ));
    }
    Ok(resp)
}

/// Downloads `url` (revalidating any HTTP cache entry), calling `progress(loaded, total)` as
/// chunks arrive (`total` is `Content-Length` when known and the body is not content-encoded).
///
/// # Errors
/// Network errors, non-2xx status, and a body shorter than its `Content-Length` (a truncated
/// download) — with a message naming the byte counts.
pub async fn fetch_bytes(
    url: &str,
    mut progress: impl FnMut(u64, Option<u64>),
) -> Result<Vec<u8>, String> {
    let resp = fetch(url, "GET", RequestCache::NoCache).await?;
    let headers = resp.headers();
    let encoded = headers
        .get("content-encoding")
        .ok()
        .flatten()
        .is_some_and(|e| e != "identity");
    let total = if encoded {
        None
    } else {
        headers
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let mut out: Vec<u8> = Vec::with_capacity(total.unwrap_or(0).min(1 << 30) as usize);
    progress(0, total);
    match resp.body() {
        Some(body) => {
            let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
            loop {
                let chunk = JsFuture::from(reader.read()).await.map_err(|e| {
                    format!(
                        "download of {url} failed after {} bytes: {}",
                        out.len(),
                        js_error(&e)
                    )
                })?;
                let done = Reflect::get(&chunk, &JsValue::from_str("done"))
                    .ok()
                    .and_then(|d| d.as_bool())
                    .unwrap_or(true);
                if done {
                    break;
                }
                let value =
                    Reflect::get(&chunk, &JsValue::from_str("value")).map_err(|e| js_error(&e))?;
                let bytes: Uint8Array = value
                    .dyn_into()
                    .map_err(|_| "stream chunk is not bytes".to_string())?;
                let start = out.len();
                out.resize(start + bytes.length() as usize, 0);
                bytes.copy_to(&mut out[start..]);
                progress(out.len() as u64, total);
            }
        }
        None => {
            let buf = JsFuture::from(resp.array_buffer().map_err(|e| js_error(&e))?)
                .await
                .map_err(|e| js_error(&e))?;
            out = Uint8Array::new(&buf).to_vec();
            progress(out.len() as u64, total);
        }
    }
    if let Some(t) = total {
        if (out.len() as u64) < t {
            return Err(format!(
                "download truncated: received {} of {t} bytes from {url}",
                out.len()
            ));
        }
    }
    Ok(out)
}

/// Fetches `url` as text (revalidating the HTTP cache).
///
/// # Errors
/// Network errors and non-2xx status.
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let resp = fetch(url, "GET", RequestCache::NoCache).await?;
    let text = JsFuture::from(resp.text().map_err(|e| js_error(&e))?)
        .await
        .map_err(|e| js_error(&e))?;
    text.as_string()
        .ok_or_else(|| "response is not text".to_string())
}

/// A cache validator for `url` from a HEAD request: `ETag`, `Last-Modified` and `Content-Length`
/// joined, so a changed file on the server gives a different string. `None` when the request
/// fails or the server sends none of them.
pub async fn head_validator(url: &str) -> Option<String> {
    let resp = fetch(url, "HEAD", RequestCache::NoStore).await.ok()?;
    let h = resp.headers();
    let get = |k: &str| h.get(k).ok().flatten().unwrap_or_default();
    let (etag, lm, len) = (get("etag"), get("last-modified"), get("content-length"));
    if etag.is_empty() && lm.is_empty() && len.is_empty() {
        return None;
    }
    Some(format!("etag={etag};last-modified={lm};length={len}"))
}

/// The query parameter `name` of the current location (window or worker), if present.
pub fn query_param(name: &str) -> Option<String> {
    let global = js_sys::global();
    let search = Reflect::get(&global, &JsValue::from_str("location"))
        .ok()
        .and_then(|l| Reflect::get(&l, &JsValue::from_str("search")).ok())
        .and_then(|s| s.as_string())?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// Why [`request_text`] got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoAnswer {
    /// A network error: the server is not running, the address is wrong, or CORS refused this
    /// origin (the browser does not say which). The browser's message.
    Unreachable(String),
    /// Nothing within the time given.
    TimedOut,
}

/// `method` `url`, with `json` as an `application/json` body if given, never cached (cookies go
/// to the page's own origin only, as `fetch` does by default): the status and the body's text, whatever the status (a 4xx's `{"error": …}` is
/// the caller's to read). Gives up after `timeout_ms`.
///
/// # Errors
/// [`NoAnswer`] when no response came.
pub async fn request_text(
    method: &str,
    url: &str,
    json: Option<&str>,
    timeout_ms: i32,
) -> Result<(u16, String), NoAnswer> {
    let unreachable = |e: &JsValue| NoAnswer::Unreachable(js_error(e));
    let init = RequestInit::new();
    init.set_method(method);
    init.set_cache(RequestCache::NoStore);
    if let Some(body) = json {
        let headers = web_sys::Headers::new().map_err(|e| unreachable(&e))?;
        headers
            .set("Content-Type", "application/json")
            .map_err(|e| unreachable(&e))?;
        init.set_headers(headers.as_ref());
        init.set_body(&JsValue::from_str(body));
    }
    let abort = web_sys::AbortController::new().map_err(|e| unreachable(&e))?;
    init.set_signal(Some(&abort.signal()));
    let req = Request::new_with_str_and_init(url, &init).map_err(|e| unreachable(&e))?;
    let global = js_sys::global();
    // The abort after `timeout_ms` (a late abort of a finished request does nothing).
    let on_timeout = {
        let abort = abort.clone();
        wasm_bindgen::closure::Closure::once_into_js(move || abort.abort())
    };
    if let Ok(f) = Reflect::get(&global, &JsValue::from_str("setTimeout")) {
        if let Some(f) = f.dyn_ref::<js_sys::Function>() {
            let _ = f.call2(&global, &on_timeout, &JsValue::from(timeout_ms));
        }
    }
    let promise = fetch_in(&global, &req);
    let late = |e: &JsValue| {
        if abort.signal().aborted() {
            NoAnswer::TimedOut
        } else {
            unreachable(e)
        }
    };
    let resp: Response = JsFuture::from(promise)
        .await
        .map_err(|e| late(&e))?
        .dyn_into()
        .map_err(|_| NoAnswer::Unreachable("fetch did not return a Response".into()))?;
    let text = JsFuture::from(resp.text().map_err(|e| late(&e))?)
        .await
        .map_err(|e| late(&e))?;
    Ok((resp.status(), text.as_string().unwrap_or_default()))
}

/// This page's (or worker's) origin, `scheme://host[:port]` (empty if unknown).
pub fn location_origin() -> String {
    Reflect::get(&js_sys::global(), &JsValue::from_str("location"))
        .ok()
        .and_then(|l| Reflect::get(&l, &JsValue::from_str("origin")).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}
