//! Traffics as columns: reading a traffic file's plain rows, and what a traffic puts on each
//! resource (transfers, bytes and the frame time bound), in exact integers.
//!
//! A traffic here is three columns (sender, receiver, size) of host indices and bytes; routes
//! come composed as the Python side's route table holds them (a transfer's link up, its link
//! down, and the run of resources between its switch and its target). Names, checks and every
//! message about a user's file stay on the Python side.
//!
//! The parts: `rows` (a CSV file of plain rows read at once), `routes` (each transfer's
//! resources from the composed route table), `loads` (per-resource sums), `frames` (what a
//! schedule's frames put on each resource), `steps` (round-robin's steps cut into frames),
//! `json` (the JSON text of a traffic's transfers and of a schedule's frames).

mod frames;
mod json;
mod loads;
mod routes;
mod rows;
mod steps;

pub use frames::{overloads, Overload};
pub use json::{frames_json, transfers_json, TransferText};
pub use loads::{resource_sums, ResourceSums};
pub use routes::TransferRoutes;
pub use rows::{read_plain_rows, TransferRows};
pub use steps::first_fit_by_step;
