//! The service's errors: a status and one message, sent as `{"error": "…"}`. Messages say what
//! was wrong with the request (4xx) or which side failed (5xx); a database error's text is logged
//! on stderr, never sent (it can name tables and settings).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// The `error` field of the body.
    pub message: String,
}

impl ApiError {
    /// 400: the request is malformed or out of range.
    pub fn bad_request(message: String) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message,
        }
    }

    /// 409: the query vector comes from a model the loaded vectors are not compatible with
    /// (spec §8; the message is the index's).
    pub fn incompatible(message: String) -> ApiError {
        ApiError {
            status: StatusCode::CONFLICT,
            message,
        }
    }

    /// 503 (pool exhausted, database down) or 504 (statement timeout): logged with `detail`.
    pub fn unavailable(
        status: StatusCode,
        message: &str,
        detail: &dyn std::fmt::Display,
    ) -> ApiError {
        eprintln!("lightembed serve: {message}: {detail}");
        ApiError {
            status,
            message: message.to_string(),
        }
    }

    /// 500: logged with `detail`, answered without it.
    pub fn internal(message: &str, detail: &dyn std::fmt::Display) -> ApiError {
        ApiError::unavailable(StatusCode::INTERNAL_SERVER_ERROR, message, detail)
    }

    /// A database error as an answer: a statement timeout is 504, a lost connection 503, anything
    /// else 500.
    pub fn from_db(e: &tokio_postgres::Error) -> ApiError {
        use tokio_postgres::error::SqlState;
        match e.code() {
            Some(c) if *c == SqlState::QUERY_CANCELED => ApiError::unavailable(
                StatusCode::GATEWAY_TIMEOUT,
                "the search took longer than the server's statement timeout",
                e,
            ),
            Some(c) if *c == SqlState::UNDEFINED_TABLE => ApiError::unavailable(
                StatusCode::SERVICE_UNAVAILABLE,
                "no passages are loaded (run the loader: lightembed.pg.load)",
                e,
            ),
            None if e.is_closed() => ApiError::unavailable(
                StatusCode::SERVICE_UNAVAILABLE,
                "the database connection was lost",
                e,
            ),
            _ => ApiError::internal("the database failed the search", e),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}
