//! Pure-Rust core of liquidsched.
//!
//! This crate has no Python in it: the PyO3 layer in the workspace root converts types and maps
//! [`CoreError`] to Python exceptions. One module per algorithm family.

pub mod coloring;
pub mod error;
pub mod exchange;
pub mod interrupt;
pub mod kpbs;
pub mod liquid;
pub mod matching;
pub mod paced;
pub mod progress;
pub mod rational;
pub mod shuffle;
pub mod simulate;
pub mod slots;
pub mod steady;
pub mod sweep;
#[cfg(test)]
mod testing;
pub mod traffic;
pub mod weighted;

pub use error::CoreError;
pub use interrupt::Interrupt;
pub use progress::{Phase, Progress, Snapshot};
