//! fileio's checks of its io_uring settings: the depth, the ring's buffers, linked and
//! unordered syncs, and the settings that need the io_uring engine.

use super::super::super::{
    IoEngine, MAX_IODEPTH, MAX_RING_BUFFER_BYTES, Setting, SpecError, SyncMethod, SyncOrder,
    format_size, spec_error,
};
use super::{FileioMode, Spec as FileioSpec};

/// Problems with the engine settings.
pub(super) fn ioengine_problems(f: &FileioSpec, errs: &mut Vec<SpecError>) {
    if f.iodepth == 0 || f.iodepth > MAX_IODEPTH {
        errs.push(spec_error(
            Setting::IO_DEPTH,
            format!("{} requests in flight", f.iodepth),
            crate::hint!(format!("use 1 to {MAX_IODEPTH} ("), Setting::IO_DEPTH, ")"),
        ));
    }
    if f.ioengine == IoEngine::Sync {
        let needs_uring = [
            (f.iodepth > 1, Setting::IO_DEPTH, "a depth above 1"),
            (f.link_sync, Setting::LINK_SYNC, "linked syncs"),
            (f.fixedbufs, Setting::FIXED_BUFS, "registered buffers"),
            (
                f.sync_order == SyncOrder::Unordered,
                Setting::SYNC_ORDER,
                "unordered syncs",
            ),
        ];
        for (set, field, what) in needs_uring {
            if set {
                errs.push(spec_error(
                    field,
                    format!(
                        "{what} need the io_uring engine; the sync engine makes one call at a time"
                    ),
                    crate::hint!("set ", (Setting::IO_ENGINE, "io_uring"), " or drop ", field),
                ));
            }
        }
        return;
    }
    if f.sync == SyncMethod::SyncFileRangeFdatasync {
        errs.push(spec_error(
            Setting::SYNC,
            "sync_file_range+fdatasync with io_uring: two calls per sync, which the io_uring \
             engine does not chain",
            crate::hint!(
                "use ",
                (Setting::IO_ENGINE, "sync"),
                " for it, or ",
                (Setting::SYNC, "fdatasync"),
                " with io_uring"
            ),
        ));
    }
    if f.mode != FileioMode::Fio {
        errs.push(spec_error(
            Setting::IO_ENGINE,
            "io_uring runs the fileio kind in fio mode, not in sysbench mode",
            crate::hint!(
                "use ",
                (Setting::IO_ENGINE, "sync"),
                " here (grouplog has its own uring strategy)"
            ),
        ));
    }
    sync_link_problems(f, errs);
    let ring_bytes = u64::from(f.iodepth).saturating_mul(f.block_size);
    if ring_bytes > MAX_RING_BUFFER_BYTES {
        errs.push(spec_error(
            Setting::IO_DEPTH,
            format!(
                "{} requests of {} need {} of buffers per thread, more than {}",
                f.iodepth,
                format_size(f.block_size),
                format_size(ring_bytes),
                format_size(MAX_RING_BUFFER_BYTES)
            ),
            crate::hint!("lower ", Setting::IO_DEPTH, " or ", Setting::BLOCK_SIZE),
        ));
    }
}

/// Problems of a linked or unordered sync on the ring: it needs a sync to link or order,
/// and a linked sync is in flight behind its write.
fn sync_link_problems(f: &FileioSpec, errs: &mut Vec<SpecError>) {
    if f.link_sync && f.iodepth < 2 {
        errs.push(spec_error(
            Setting::LINK_SYNC,
            "a write linked to its sync is two requests in flight, more than iodepth 1",
            crate::hint!(
                "raise ",
                (Setting::IO_DEPTH, "2"),
                " or drop ",
                Setting::LINK_SYNC
            ),
        ));
    }
    if f.link_sync && f.sync == SyncMethod::None {
        errs.push(spec_error(
            Setting::LINK_SYNC,
            "there is no sync to link (sync = none)",
            crate::hint!(
                "choose a ",
                Setting::SYNC,
                " method or drop ",
                Setting::LINK_SYNC
            ),
        ));
    }
    if f.sync_order == SyncOrder::Unordered && f.link_sync {
        errs.push(spec_error(
            Setting::SYNC_ORDER,
            "a linked sync always starts after its write, so it cannot be unordered",
            crate::hint!(
                "drop ",
                Setting::LINK_SYNC,
                " or use ",
                (Setting::SYNC_ORDER, "ordered")
            ),
        ));
    }
    if f.sync_order == SyncOrder::Unordered && f.sync == SyncMethod::None {
        errs.push(spec_error(
            Setting::SYNC_ORDER,
            "there is no sync to order (sync = none)",
            crate::hint!(
                "choose a ",
                Setting::SYNC,
                " method or drop ",
                Setting::SYNC_ORDER
            ),
        ));
    }
}
