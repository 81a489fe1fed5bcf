//! Which process owns a run, a lock or a trace instance: its pid and start time, so a
//! recycled pid never passes for the owner. Below the store and the tracer, which both ask.

/// This process's id and start time (in clock ticks since boot, `/proc/self/stat` field 22).
pub fn current_owner() -> (i64, Option<i64>) {
    let pid = std::process::id();
    (i64::from(pid), process_start_ticks(pid))
}

/// Start time of a process, `None` when it does not exist (or `/proc` is unreadable).
fn process_start_ticks(pid: u32) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: skip past the last ')'.
    let after_name = stat.rsplit_once(')')?.1;
    let mut fields = after_name.split_whitespace();
    // Fields from 3 (state) on; a zombie (killed, not yet reaped) no longer runs.
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    // starttime is field 22.
    fields.nth(22 - 4)?.parse().ok()
}

/// Whether the process that began a run still runs (same pid and same start time, so a
/// recycled pid does not count).
pub fn owner_alive(pid: Option<i64>, start_ticks: Option<i64>) -> bool {
    let Some(pid) = pid.and_then(|p| u32::try_from(p).ok()) else {
        return false;
    };
    match process_start_ticks(pid) {
        None => false,
        Some(now) => start_ticks.is_none_or(|then| then == now),
    }
}
