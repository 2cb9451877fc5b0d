//! C interface of the liquidsched core, for programs that cannot reach the Python package: the
//! MPI interposition library (`pmpi/`) plans `MPI_Alltoall` and `MPI_Alltoallv` through it.
//!
//! The header is `include/liquidsched.h`. Every function catches panics and reports errors as a
//! return code with a message in the caller's buffer; nothing unwinds into C.

pub mod fabric;
pub mod input;
pub mod model;
pub mod paced;
pub mod plan;
pub mod selection;
pub mod units;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use liquidsched_core::exchange::Planner;
use liquidsched_core::paced::PacedPlanner;

use crate::fabric::{parse_fabric, Fabric};
use crate::input::read_file;
use crate::model::{alltoall_can_lose, default_alltoall_mode};
use crate::paced::rank_paced_planner;
use crate::plan::{plan_ranks, RankPlan};
use crate::selection::{Collective, Selection};
use crate::units::{parse_bytes, parse_seconds, parse_share};

/// Copy `message` into the caller's buffer, cut to fit, always NUL-terminated.
fn write_error(message: &str, error: *mut c_char, error_len: usize) {
    if error.is_null() || error_len == 0 {
        return;
    }
    let bytes = message.as_bytes();
    let n = bytes.len().min(error_len - 1);
    // SAFETY: the caller gives a writable buffer of error_len bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), error as *mut u8, n);
        *error.add(n) = 0;
    }
}

fn guarded<T>(
    error: *mut c_char,
    error_len: usize,
    failed: T,
    body: impl FnOnce() -> Result<T, String>,
) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(message)) => {
            write_error(&message, error, error_len);
            failed
        }
        Err(_) => {
            write_error(
                "internal error in the liquidsched core (a bug: please report it)",
                error,
                error_len,
            );
            failed
        }
    }
}

/// The `len` values at `values`, or an error when the pointer is null though values are
/// expected; empty when `len` is 0, whatever the pointer (a null pointer is never a slice).
///
/// # Safety
/// A non-null `values` points to `len` readable values that outlive the slice.
unsafe fn slice_of<'a, T>(values: *const T, len: usize) -> Result<&'a [T], String> {
    match (values.is_null(), len) {
        (_, 0) => Ok(&[]),
        (true, _) => Err("a null pointer was given".into()),
        (false, _) => Ok(std::slice::from_raw_parts(values, len)),
    }
}

/// Read the fabric file at `path`; NULL with a message naming the file and line on error.
///
/// # Safety
/// `path` is a NUL-terminated string; `error` a writable buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_fabric_load(
    path: *const c_char,
    error: *mut c_char,
    error_len: usize,
) -> *mut Fabric {
    guarded(error, error_len, std::ptr::null_mut(), || {
        let path = text_of(path, "fabric file")?;
        let text = read_file(&path)?;
        let fabric = parse_fabric(&text).map_err(|e| format!("{path}: {e}"))?;
        Ok(Box::into_raw(Box::new(fabric)))
    })
}

/// Free a fabric from [`ls_fabric_load`].
///
/// # Safety
/// `fabric` comes from `ls_fabric_load` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn ls_fabric_free(fabric: *mut Fabric) {
    if !fabric.is_null() {
        drop(Box::from_raw(fabric));
    }
}

/// How many world ranks the fabric maps to hosts.
///
/// # Safety
/// `fabric` comes from `ls_fabric_load`.
#[no_mangle]
pub unsafe extern "C" fn ls_fabric_ranks(fabric: *const Fabric) -> i32 {
    fabric.as_ref().map_or(0, |f| f.host_of_rank.len() as i32)
}

/// A planned exchange as C sees it (see the header).
#[repr(C)]
pub struct LsPlan {
    pub frames: u32,
    pub frame_start: *const u32,
    pub src: *const u32,
    pub dst: *const u32,
    pub bytes: *const u64,
    pub locals: u32,
    pub local_src: *const u32,
    pub local_dst: *const u32,
    pub local_bytes: *const u64,
    pub planner: i32,
    pub lower_bound_frames: u32,
    pub proven: i32,
    pub bound_s: f64,
    pub model_s: f64,
    pub owner: *mut c_void,
}

/// The arrays an [`LsPlan`] points into.
struct PlanArrays {
    frame_start: Vec<u32>,
    src: Vec<u32>,
    dst: Vec<u32>,
    bytes: Vec<u64>,
    local_src: Vec<u32>,
    local_dst: Vec<u32>,
    local_bytes: Vec<u64>,
}

fn arrays_of(plan: &RankPlan) -> PlanArrays {
    let mut a = PlanArrays {
        frame_start: vec![0],
        src: Vec::new(),
        dst: Vec::new(),
        bytes: Vec::new(),
        local_src: Vec::new(),
        local_dst: Vec::new(),
        local_bytes: Vec::new(),
    };
    for frame in &plan.frames {
        for &(s, d, b) in frame {
            a.src.push(s);
            a.dst.push(d);
            a.bytes.push(b);
        }
        a.frame_start.push(a.src.len() as u32);
    }
    for &(s, d, b) in &plan.local {
        a.local_src.push(s);
        a.local_dst.push(d);
        a.local_bytes.push(b);
    }
    a
}

/// Plan the exchange of `bytes[i * n + j]` bytes from rank `i` to rank `j` of a communicator
/// of `n` ranks, rank `i` being world rank `world_rank[i]`, with at most `time_limit_s`
/// seconds of search. 0 on success (free `out` with [`ls_plan_free`]), -1 with a message.
///
/// # Safety
/// `fabric` comes from `ls_fabric_load`; `world_rank` has `n` entries, `bytes` `n * n`; `out`
/// is writable; `error` a writable buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_plan_ranks(
    fabric: *const Fabric,
    n: u32,
    world_rank: *const i32,
    bytes: *const u64,
    time_limit_s: f64,
    out: *mut LsPlan,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let fabric = fabric.as_ref().ok_or("no fabric")?;
        if out.is_null() {
            return Err("a null pointer was given".into());
        }
        let n = n as usize;
        let ranks = slice_of(world_rank, n)?;
        let matrix = slice_of(bytes, n * n)?;
        let plan = plan_ranks(fabric, ranks, matrix, time_limit_s)?;
        let arrays = Box::new(arrays_of(&plan));
        *out = LsPlan {
            frames: plan.frames.len() as u32,
            frame_start: arrays.frame_start.as_ptr(),
            src: arrays.src.as_ptr(),
            dst: arrays.dst.as_ptr(),
            bytes: arrays.bytes.as_ptr(),
            locals: plan.local.len() as u32,
            local_src: arrays.local_src.as_ptr(),
            local_dst: arrays.local_dst.as_ptr(),
            local_bytes: arrays.local_bytes.as_ptr(),
            planner: match plan.planner {
                Planner::Liquid => 0,
                Planner::Weighted => 1,
            },
            lower_bound_frames: plan.lower_bound_frames,
            proven: plan.proven as i32,
            bound_s: plan.bound_s,
            model_s: plan.model_s,
            owner: Box::into_raw(arrays) as *mut c_void,
        };
        Ok(0)
    })
}

/// Free what [`ls_plan_ranks`] allocated.
///
/// # Safety
/// `plan` was filled by `ls_plan_ranks` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn ls_plan_free(plan: *mut LsPlan) {
    if let Some(p) = plan.as_mut() {
        if !p.owner.is_null() {
            drop(Box::from_raw(p.owner as *mut PlanArrays));
            p.owner = std::ptr::null_mut();
        }
    }
}

/// A paced planner for a communicator of `n` ranks, rank `i` being world rank `world_rank[i]`:
/// NULL with a message when a rank is not in the fabric or a route is missing. Free it with
/// [`ls_paced_planner_free`].
///
/// # Safety
/// `fabric` comes from `ls_fabric_load`; `world_rank` has `n` entries; `error` a writable
/// buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_paced_planner_new(
    fabric: *const Fabric,
    n: u32,
    world_rank: *const i32,
    error: *mut c_char,
    error_len: usize,
) -> *mut PacedPlanner {
    guarded(error, error_len, std::ptr::null_mut(), || {
        let fabric = fabric.as_ref().ok_or("no fabric")?;
        let ranks = slice_of(world_rank, n as usize)?;
        Ok(Box::into_raw(Box::new(rank_paced_planner(fabric, ranks)?)))
    })
}

/// Plan `bytes[i * n + j]` bytes from rank `i` to rank `j`, from the planner's last plan when
/// it has one: Λ in `bound_s`, and in `warm` whether the plan started from the last one. 0 on
/// success, -1 with a message.
///
/// # Safety
/// `planner` comes from `ls_paced_planner_new`; `bytes` has `n * n` entries for its `n` ranks;
/// `bound_s` and `warm` are writable; `error` a writable buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_paced_plan(
    planner: *mut PacedPlanner,
    bytes: *const u64,
    bound_s: *mut f64,
    warm: *mut c_int,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let planner = planner.as_mut().ok_or("no planner")?;
        let n = planner.ranks();
        if bound_s.is_null() || warm.is_null() {
            return Err("a null pointer was given".into());
        }
        let matrix = slice_of(bytes, n * n)?;
        let plan = planner.plan(matrix).map_err(|e| e.to_string())?;
        *bound_s = plan.bound_s;
        *warm = plan.warm as c_int;
        Ok(0)
    })
}

/// Free a planner from [`ls_paced_planner_new`].
///
/// # Safety
/// `planner` comes from `ls_paced_planner_new` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn ls_paced_planner_free(planner: *mut PacedPlanner) {
    if !planner.is_null() {
        drop(Box::from_raw(planner));
    }
}

/// The text of a C string, or an error naming what was missing.
unsafe fn text_of(s: *const c_char, what: &str) -> Result<String, String> {
    if s.is_null() {
        return Err(format!("no {what} given"));
    }
    Ok(CStr::from_ptr(s).to_string_lossy().into_owned())
}

/// Read a size in bytes with its unit (`4KiB` is 4096, `4KB` 4000). 0 on success, -1 with a
/// message.
///
/// # Safety
/// `text` is a NUL-terminated string; `out` is writable; `error` a writable buffer of
/// `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_parse_bytes(
    text: *const c_char,
    out: *mut u64,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let value = parse_bytes(&text_of(text, "size")?)?;
        *out.as_mut().ok_or("a null pointer was given")? = value;
        Ok(0)
    })
}

/// Read a positive duration in seconds with its unit (`500ms`). 0 on success, -1 with a message.
///
/// # Safety
/// As [`ls_parse_bytes`].
#[no_mangle]
pub unsafe extern "C" fn ls_parse_seconds(
    text: *const c_char,
    out: *mut f64,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let value = parse_seconds(&text_of(text, "duration")?)?;
        *out.as_mut().ok_or("a null pointer was given")? = value;
        Ok(0)
    })
}

/// Read a share of the links, a plain number from 0 to `most` (`0.02`). 0 on success, -1 with
/// a message.
///
/// # Safety
/// As [`ls_parse_bytes`].
#[no_mangle]
pub unsafe extern "C" fn ls_parse_share(
    text: *const c_char,
    most: f64,
    out: *mut f64,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let value = parse_share(&text_of(text, "share")?, most)?;
        *out.as_mut().ok_or("a null pointer was given")? = value;
        Ok(0)
    })
}

fn collective_of(code: c_int) -> Result<Collective, String> {
    match code {
        0 => Ok(Collective::Alltoall),
        1 => Ok(Collective::Alltoallv),
        _ => Err(format!("unknown collective {code}")),
    }
}

/// Read the selection table at `path` and check it against the fabric's network and the MPI
/// library's version text; NULL with a message (naming the file) when it is unreadable or
/// measured elsewhere.
///
/// # Safety
/// `path` and `mpi_library` are NUL-terminated strings; `fabric` comes from `ls_fabric_load`;
/// `error` a writable buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_selection_load(
    path: *const c_char,
    fabric: *const Fabric,
    mpi_library: *const c_char,
    error: *mut c_char,
    error_len: usize,
) -> *mut Selection {
    guarded(error, error_len, std::ptr::null_mut(), || {
        let path = text_of(path, "selection table")?;
        let library = text_of(mpi_library, "MPI library version")?;
        let text = read_file(&path)?;
        let selection = Selection::parse(&text, &path)?;
        let fingerprint = fabric.as_ref().and_then(|f| f.fingerprint.as_deref());
        selection
            .check(fingerprint, &library)
            .map_err(|e| format!("{path}: {e}"))?;
        Ok(Box::into_raw(Box::new(selection)))
    })
}

/// Free a table from [`ls_selection_load`].
///
/// # Safety
/// `selection` comes from `ls_selection_load` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn ls_selection_free(selection: *mut Selection) {
    if !selection.is_null() {
        drop(Box::from_raw(selection));
    }
}

/// The number of ranks the table was measured with.
///
/// # Safety
/// `selection` comes from `ls_selection_load`.
#[no_mangle]
pub unsafe extern "C" fn ls_selection_ranks(selection: *const Selection) -> u32 {
    selection.as_ref().map_or(0, |s| s.ranks)
}

/// The mode (0 the library's own, 1 frames, 2 paced) for `collective` (0 `MPI_Alltoall`, 1
/// `MPI_Alltoallv`) with messages of `mean_bytes` on average; the measured size it comes from
/// in `measured_bytes` (if not NULL). 0 (the library) for an unknown collective.
///
/// # Safety
/// `selection` comes from `ls_selection_load`; `measured_bytes` is writable or NULL.
#[no_mangle]
pub unsafe extern "C" fn ls_selection_choose(
    selection: *const Selection,
    collective: c_int,
    mean_bytes: f64,
    measured_bytes: *mut u64,
) -> c_int {
    guarded(std::ptr::null_mut(), 0, 0, || {
        let s = selection.as_ref().ok_or("no table")?;
        let (mode, measured) = s.choose(collective_of(collective)?, mean_bytes);
        if let Some(m) = measured_bytes.as_mut() {
            *m = measured;
        }
        Ok(mode as c_int)
    })
}

/// 1 when the table runs a schedule for `collective` at some measured size, else 0.
///
/// # Safety
/// `selection` comes from `ls_selection_load`.
#[no_mangle]
pub unsafe extern "C" fn ls_selection_ever_schedules(
    selection: *const Selection,
    collective: c_int,
) -> c_int {
    guarded(std::ptr::null_mut(), 0, 0, || {
        let s = selection.as_ref().ok_or("no table")?;
        Ok(s.ever_schedules(collective_of(collective)?) as c_int)
    })
}

/// 1 when a schedule could beat the library's `MPI_Alltoall` of `block` bytes per message in
/// the cost model, 0 when the library's algorithm already takes the bound there.
#[no_mangle]
pub extern "C" fn ls_alltoall_can_lose(block: u64) -> c_int {
    alltoall_can_lose(block) as c_int
}

/// Without a table: the cost model's mode (0 the library's own, 1 frames) for an
/// `MPI_Alltoall` of `block` bytes per message planned as `frames` frames of model time
/// `model_s`; the modelled times of the library and of the schedule in `library_s` and
/// `schedule_s` (NaN where not modelled). -1 with a message on error.
///
/// # Safety
/// `fabric` comes from `ls_fabric_load`; `world_rank` has `n` entries; `library_s` and
/// `schedule_s` are writable; `error` a writable buffer of `error_len` bytes (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ls_default_alltoall_mode(
    fabric: *const Fabric,
    n: u32,
    world_rank: *const i32,
    block: u64,
    model_s: f64,
    frames: u32,
    library_s: *mut f64,
    schedule_s: *mut f64,
    error: *mut c_char,
    error_len: usize,
) -> c_int {
    guarded(error, error_len, -1, || {
        let fabric = fabric.as_ref().ok_or("no fabric")?;
        if library_s.is_null() || schedule_s.is_null() {
            return Err("a null pointer was given".into());
        }
        let ranks = slice_of(world_rank, n as usize)?;
        let (mode, library, schedule) =
            default_alltoall_mode(fabric, ranks, block, model_s, frames)?;
        *library_s = library;
        *schedule_s = schedule;
        Ok(mode as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// What `load` says when it returns NULL for `path`, as the interposition library sees it.
    fn refusal(path: &str, load: impl Fn(*const c_char, *mut c_char, usize) -> bool) -> String {
        let path = CString::new(path).unwrap();
        let mut error = vec![0 as c_char; 768];
        assert!(
            load(path.as_ptr(), error.as_mut_ptr(), error.len()),
            "{path:?} was accepted"
        );
        unsafe { CStr::from_ptr(error.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    fn fabric_refusal(path: &str) -> String {
        refusal(path, |p, e, n| unsafe { ls_fabric_load(p, e, n) }.is_null())
    }

    fn selection_refusal(path: &str) -> String {
        let library = CString::new("MPICH Version: 4.2.0").unwrap();
        refusal(path, |p, e, n| {
            unsafe { ls_selection_load(p, std::ptr::null(), library.as_ptr(), e, n) }.is_null()
        })
    }

    fn scratch(name: &str, content: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("liquidsched-capi-lib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_string()
    }

    #[test]
    fn a_fabric_that_is_a_device_is_refused_at_once_not_read_until_memory_runs_out() {
        assert_eq!(
            fabric_refusal("/dev/zero"),
            "/dev/zero: is a character device, not a regular file"
        );
    }

    #[test]
    fn a_selection_table_that_is_a_device_a_directory_or_not_utf8_is_refused() {
        assert_eq!(
            selection_refusal("/dev/zero"),
            "/dev/zero: is a character device, not a regular file"
        );
        let dir = std::env::temp_dir();
        assert!(selection_refusal(dir.to_str().unwrap())
            .ends_with("is a directory, not a regular file"));
        let binary = scratch("table.json", b"{\"format\": \"\xff\"}");
        assert!(
            selection_refusal(&binary).contains("not a UTF-8 text file: byte 0xff at offset 12")
        );
    }

    #[test]
    fn an_input_over_the_cap_is_refused_naming_the_variable() {
        // 64 MiB and one byte, written sparse: the size is refused before anything is read.
        let path = scratch("huge.json", b"");
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(input::DEFAULT_MAX_INPUT_BYTES + 1).unwrap();
        for message in [selection_refusal(&path), fabric_refusal(&path)] {
            assert!(
                message.contains("67,108,865 bytes, more than the 67,108,864 bytes (64 MiB)"),
                "{message}"
            );
            assert!(message.contains("LIQUIDSCHED_MAX_INPUT_BYTES"), "{message}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
