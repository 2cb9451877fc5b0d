//! The one error type of the core. Every public entry point validates its input and returns
//! `Err(CoreError)` rather than panicking, so nothing panics across the Python boundary.

use std::fmt;

/// An error raised by a core algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The input does not describe a valid problem; the message names what is wrong.
    InvalidInput(String),
    /// The problem is valid but larger than the algorithm accepts.
    TooLarge(String),
    /// A failure inside the core that is not the caller's fault (a bug, or no thread).
    Internal(String),
    /// The caller's interrupt probe fired (Ctrl-C): the computation stopped, with no result.
    Interrupted,
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::InvalidInput(msg) => write!(f, "invalid input: {msg}"),
            CoreError::TooLarge(msg) => write!(f, "problem too large: {msg}"),
            CoreError::Internal(msg) => write!(f, "internal error: {msg}"),
            CoreError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for CoreError {}

/// Shorthand for results of the core.
pub type CoreResult<T> = Result<T, CoreError>;
