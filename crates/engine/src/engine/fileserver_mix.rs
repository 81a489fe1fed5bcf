//! The `fileserver` operation mix: a deterministic, seeded generator of file-server
//! operations for one client, modelled on the NetBench profile dbench replays (seed 003,
//! "xfs: drop async cache flushes from CIL commits", benchmarks with `dbench -t 30`).
//!
//! It is our own generator, not dbench's loadfile. The weights are the operation counts of
//! a dbench 4.00 run on this project's machine (`shared/reference/C-ext4-4.out`, 4 clients,
//! 10 s on ext4), mapped to POSIX calls:
//!
//! | dbench            | count   | here     | weight | POSIX call                              |
//! |-------------------|--------:|----------|-------:|-----------------------------------------|
//! | NTCreateX (new)   |         | create   | 27682  | openat(O_CREAT\|O_EXCL\|O_RDWR)         |
//! | NTCreateX (found) |         | open     | 72956  | openat(O_RDWR) of an existing file      |
//! | NTCreateX (miss)  |         | stat     | (36371)| fstatat of a missing name (ENOENT)      |
//! | Close             | 100638  | close    | 100638 | close                                   |
//! | Rename            |   5810  | rename   |   5810 | renameat (same directory)               |
//! | Unlink            |  27682  | unlink   |  27682 | unlinkat                                |
//! | Qpathinfo         | 124306  | stat     | 160677 | fstatat (49 % of them on missing names) |
//! | Qfileinfo         |  21686  | fstat    |  21686 | fstat                                   |
//! | Qfsinfo           |  22800  | statfs   |  22800 | fstatvfs                                |
//! | Sfileinfo         |  11167  | setattr  |  11167 | futimens                                |
//! | Find              |  48078  | readdir  |  48078 | opendir + readdir to the end + closedir |
//! | WriteX            |  67765  | write    |  67765 | pwrite                                  |
//! | ReadX             | 215227  | read     | 215227 | pread                                   |
//! | Flush             |   9609  | flush    |   9609 | fsync                                   |
//! | LockX / UnlockX   | 448+448 | —        |      — | left out (0.1 %, no data or journal)    |
//!
//! NTCreateX (137009) is split as dbench's loadfile splits it: opens that succeed equal the
//! closes (100638); of those, new files equal the unlinks (27682, so the working set stays
//! the same size) and the rest (72956) open existing files; the 36371 that fail with "not
//! found" are name lookups, counted with Qpathinfo as `stat`, of which 34 % also miss in
//! the loadfile — together (36371 + 0.34 × 124306) / 160677 = 49 % of stats miss.
//!
//! Sizes (by count; dbench's loadfile: writes 22 % ≤ 512 B — mostly 1 byte —, 30 % up to
//! 4 KiB, 8 % up to 16 KiB, 7 % up to 64 KiB, 32 % exactly 64 KiB, mean 25.7 kB; reads 5 %
//! ≤ 512 B, 75 % up to 4 KiB, 6 % up to 16 KiB, 14 % up to 64 KiB, mean 11.9 kB):
//! - write: 1 B 19 %, 512 B 3 %, 2 KiB 5 %, 4 KiB 25 %, 8 KiB 9 %, 32 KiB 7 %, 64 KiB 32 %
//!   (mean 25.1 kB);
//! - read: 512 B 5 %, 2 KiB 4 %, 4 KiB 71 %, 8 KiB 4 %, 16 KiB 2 %, 60 KiB 14 % (mean 12.3 kB);
//! - initial files: 4 KiB 22 %, 16 KiB 8 %, 64 KiB 11 %, 192 KiB 49 %, 768 KiB 10 % (the
//!   final sizes of the loadfile's files: 22 % ≤ 4 KiB, 8 % ≤ 16 KiB, 11 % ≤ 64 KiB,
//!   49 % ≤ 256 KiB, 10 % ≤ 1 MiB).
//!
//! State keeps every operation valid: a client holds at most [`MAX_OPEN`] open files;
//! reads, writes, fstat, setattr, flush and close use an open one; open, rename and unlink
//! use a closed one; create makes a new name; the working set stays between half and twice
//! `files_per_client`. A drawn operation that is not possible in the current state is
//! drawn again, which moves the realised proportions by a few per cent at most (tested).
//! Each open file has a position: reads and writes advance it (a read that would pass the
//! end starts again at 0, a write that would pass [`MAX_FILE_BYTES`] goes back to 0); open
//! and create set it to 0. A read uses an open file that holds the whole request, so reads
//! are never short, as in dbench's trace. Flush syncs the file written last if it is still
//! open, else any open file.

use super::offsets::mix;

/// One file-server operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Create,
    Open,
    Close,
    Write,
    Read,
    Rename,
    Unlink,
    Stat,
    Fstat,
    Statfs,
    Setattr,
    Readdir,
    Flush,
}

/// Every operation, in table order (the index of each is `op as usize`).
pub(super) const OPS: [Op; 13] = [
    Op::Create,
    Op::Open,
    Op::Close,
    Op::Write,
    Op::Read,
    Op::Rename,
    Op::Unlink,
    Op::Stat,
    Op::Fstat,
    Op::Statfs,
    Op::Setattr,
    Op::Readdir,
    Op::Flush,
];

/// Weights of [`OPS`] (dbench 4.00 operation counts, see the module comment).
pub(super) const WEIGHTS: [u32; 13] = [
    27682, 72956, 100638, 67765, 215227, 5810, 27682, 160677, 21686, 22800, 11167, 48078, 9609,
];

/// Share of `stat` calls on names that do not exist, per mille.
pub(super) const STAT_MISS_PER_MILLE: u64 = 489;

impl Op {
    /// Name in the per-operation table.
    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Open => "open",
            Op::Close => "close",
            Op::Write => "write",
            Op::Read => "read",
            Op::Rename => "rename",
            Op::Unlink => "unlink",
            Op::Stat => "stat",
            Op::Fstat => "fstat",
            Op::Statfs => "statfs",
            Op::Setattr => "setattr",
            Op::Readdir => "readdir",
            Op::Flush => "flush",
        }
    }
}

/// Most files a client holds open at once.
pub(super) const MAX_OPEN: usize = 16;
/// Largest file: a write that would pass it starts again at offset 0.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;
/// Largest single read or write (the I/O buffers' size).
pub(super) const MAX_IO_BYTES: usize = 64 << 10;
/// Subdirectories of each client's tree (dbench's NetBench tree has nine application
/// directories).
pub(super) const DIRS: u16 = 8;

const WRITE_SIZES: &[(u64, u32)] = &[
    (1, 19),
    (512, 3),
    (2048, 5),
    (4096, 25),
    (8192, 9),
    (32768, 7),
    (65536, 32),
];
const READ_SIZES: &[(u64, u32)] = &[
    (512, 5),
    (2048, 4),
    (4096, 71),
    (8192, 4),
    (16384, 2),
    (61440, 14),
];
const FILE_SIZES: &[(u64, u32)] = &[
    (4096, 22),
    (16384, 8),
    (65536, 11),
    (196608, 49),
    (786432, 10),
];

/// A splitmix64 sequence.
#[derive(Clone, Debug)]
pub(super) struct Rng(u64);

impl Rng {
    /// A sequence from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(mix(seed ^ 0xF11E_5E4F_0000_0003))
    }

    /// The next value.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A value in `0..n` (n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    fn pick(&mut self, table: &[(u64, u32)]) -> u64 {
        let total: u32 = table.iter().map(|(_, w)| w).sum();
        let mut r = self.below(u64::from(total)) as u32;
        for &(value, w) in table {
            if r < w {
                return value;
            }
            r -= w;
        }
        table[table.len() - 1].0
    }
}

/// One file of a client's working set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileState {
    /// Subdirectory (0..DIRS).
    pub dir: u16,
    /// Name number (unique within the client; names are `dNN/fNNNNNNNNNNNN`).
    pub id: u64,
    /// Current size in bytes.
    pub size: u64,
    /// Handle slot while open.
    pub handle: Option<u8>,
}

/// An open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HandleState {
    /// Index in the file table.
    pub file: usize,
    /// Position of the next read or write.
    pub pos: u64,
}

/// What to do next; handle slots index the executor's descriptor table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Create a new file `dir/id` and open it into `slot`.
    Create { dir: u16, id: u64, slot: u8 },
    /// Open the existing closed file `dir/id` into `slot`.
    Open { dir: u16, id: u64, slot: u8 },
    /// Close `slot`.
    Close { slot: u8 },
    /// Write `len` bytes at `offset` through `slot`.
    Write { slot: u8, offset: u64, len: u32 },
    /// Read up to `len` bytes at `offset` through `slot`.
    Read { slot: u8, offset: u64, len: u32 },
    /// Rename closed `dir/from` to `dir/to` (a new name).
    Rename { dir: u16, from: u64, to: u64 },
    /// Unlink closed `dir/id`.
    Unlink { dir: u16, id: u64 },
    /// stat `dir/id`; when `missing`, the name `dir/xNNN` that never exists.
    Stat { dir: u16, id: u64, missing: bool },
    /// fstat `slot`.
    Fstat { slot: u8 },
    /// statvfs of the client's directory.
    Statfs,
    /// Set the times of `slot`.
    Setattr { slot: u8 },
    /// List subdirectory `dir`.
    Readdir { dir: u16 },
    /// fsync `slot`.
    Flush { slot: u8 },
}

impl Step {
    /// The operation this step performs.
    pub fn op(&self) -> Op {
        match self {
            Step::Create { .. } => Op::Create,
            Step::Open { .. } => Op::Open,
            Step::Close { .. } => Op::Close,
            Step::Write { .. } => Op::Write,
            Step::Read { .. } => Op::Read,
            Step::Rename { .. } => Op::Rename,
            Step::Unlink { .. } => Op::Unlink,
            Step::Stat { .. } => Op::Stat,
            Step::Fstat { .. } => Op::Fstat,
            Step::Statfs => Op::Statfs,
            Step::Setattr { .. } => Op::Setattr,
            Step::Readdir { .. } => Op::Readdir,
            Step::Flush { .. } => Op::Flush,
        }
    }
}

/// One client's generator and the state that keeps its operations valid.
#[derive(Clone, Debug)]
pub(super) struct Mix {
    rng: Rng,
    cumulative: [u32; 13],
    files: Vec<FileState>,
    handles: [Option<HandleState>; MAX_OPEN],
    open: usize,
    max_open: usize,
    min_files: usize,
    max_files: usize,
    next_id: u64,
    last_written: Option<u8>,
}

impl Mix {
    /// The generator of client `client` with `files_per_client` initial files, sizes
    /// drawn from the documented distribution. Deterministic in `seed ^ client`.
    pub fn new(seed: u64, client: u32, files_per_client: u32) -> Self {
        let mut rng = Rng::new(seed ^ u64::from(client));
        let initial = files_per_client.max(1) as usize;
        let max_files = initial * 2;
        let mut files = Vec::with_capacity(max_files);
        for id in 0..initial as u64 {
            let size = rng.pick(FILE_SIZES);
            files.push(FileState {
                dir: (id % u64::from(DIRS)) as u16,
                id,
                size,
                handle: None,
            });
        }
        let mut cumulative = [0u32; 13];
        let mut sum = 0;
        for (c, w) in cumulative.iter_mut().zip(WEIGHTS) {
            sum += w;
            *c = sum;
        }
        Mix {
            rng,
            cumulative,
            files,
            handles: [None; MAX_OPEN],
            open: 0,
            max_open: MAX_OPEN.min(max_files),
            min_files: (initial / 2).max(1),
            max_files,
            next_id: initial as u64,
            last_written: None,
        }
    }

    /// The working set (initial files before the first step).
    pub fn files(&self) -> &[FileState] {
        &self.files
    }

    /// Slots holding an open file.
    pub fn open_slots(&self) -> impl Iterator<Item = u8> + '_ {
        self.handles
            .iter()
            .enumerate()
            .filter(|(_, h)| h.is_some())
            .map(|(i, _)| i as u8)
    }

    /// Draws an operation by weight (before any state check).
    #[inline]
    pub fn draw(&mut self) -> Op {
        let r = self.rng.below(u64::from(self.cumulative[12])) as u32;
        let i = self.cumulative.iter().position(|&c| r < c).unwrap_or(12);
        OPS[i]
    }

    /// The next valid step; the state is updated as if it succeeded.
    pub fn next_step(&mut self) -> Step {
        loop {
            let op = self.draw();
            if let Some(step) = self.try_step(op) {
                return step;
            }
        }
    }

    fn try_step(&mut self, op: Op) -> Option<Step> {
        match op {
            Op::Create => self.step_create(),
            Op::Open => self.step_open(),
            Op::Close => self.step_close(),
            Op::Write => self.step_write(),
            Op::Read => self.step_read(),
            Op::Rename => self.step_rename(),
            Op::Unlink => self.step_unlink(),
            Op::Stat => self.step_stat(),
            Op::Fstat => self.open_slot().map(|slot| Step::Fstat { slot }),
            Op::Statfs => Some(Step::Statfs),
            Op::Setattr => self.open_slot().map(|slot| Step::Setattr { slot }),
            Op::Readdir => Some(Step::Readdir {
                dir: self.rng.below(u64::from(DIRS)) as u16,
            }),
            Op::Flush => {
                let slot = match self.last_written {
                    Some(s) => s,
                    None => self.open_slot()?,
                };
                Some(Step::Flush { slot })
            }
        }
    }

    fn step_create(&mut self) -> Option<Step> {
        if self.open >= self.max_open || self.files.len() >= self.max_files {
            return None;
        }
        let slot = self.free_slot()?;
        let dir = self.rng.below(u64::from(DIRS)) as u16;
        let id = self.new_id();
        self.files.push(FileState {
            dir,
            id,
            size: 0,
            handle: Some(slot),
        });
        self.attach(slot, self.files.len() - 1);
        Some(Step::Create { dir, id, slot })
    }

    fn step_open(&mut self) -> Option<Step> {
        if self.open >= self.max_open {
            return None;
        }
        let file = self.closed_file()?;
        let slot = self.free_slot()?;
        self.files[file].handle = Some(slot);
        self.attach(slot, file);
        let f = self.files[file];
        Some(Step::Open {
            dir: f.dir,
            id: f.id,
            slot,
        })
    }

    fn step_close(&mut self) -> Option<Step> {
        let slot = self.open_slot()?;
        let h = self.handles[slot as usize].take()?;
        self.files[h.file].handle = None;
        self.open -= 1;
        if self.last_written == Some(slot) {
            self.last_written = None;
        }
        Some(Step::Close { slot })
    }

    fn step_write(&mut self) -> Option<Step> {
        let slot = self.open_slot()?;
        let len = self.rng.pick(WRITE_SIZES);
        let h = self.handles[slot as usize].as_mut()?;
        if h.pos + len > MAX_FILE_BYTES {
            h.pos = 0;
        }
        let offset = h.pos;
        h.pos += len;
        let f = &mut self.files[h.file];
        f.size = f.size.max(offset + len);
        self.last_written = Some(slot);
        Some(Step::Write {
            slot,
            offset,
            len: len as u32,
        })
    }

    fn step_read(&mut self) -> Option<Step> {
        // dbench's reads are never short: read from an open file that holds the
        // whole request (a 60 KiB read needs a file of at least 60 KiB).
        let len = self.rng.pick(READ_SIZES);
        let slot = self.open_slot_holding(len)?;
        let h = self.handles[slot as usize].as_mut()?;
        if h.pos + len > self.files[h.file].size {
            h.pos = 0;
        }
        let offset = h.pos;
        h.pos += len;
        Some(Step::Read {
            slot,
            offset,
            len: len as u32,
        })
    }

    fn step_rename(&mut self) -> Option<Step> {
        let file = self.closed_file()?;
        let to = self.new_id();
        let f = &mut self.files[file];
        let from = f.id;
        f.id = to;
        Some(Step::Rename {
            dir: f.dir,
            from,
            to,
        })
    }

    fn step_unlink(&mut self) -> Option<Step> {
        if self.files.len() <= self.min_files {
            return None;
        }
        let file = self.closed_file()?;
        let gone = self.files.swap_remove(file);
        // The file moved into `file` may be open: its handle follows it.
        if let Some(moved) = self.files.get(file)
            && let Some(slot) = moved.handle
            && let Some(h) = self.handles[slot as usize].as_mut()
        {
            h.file = file;
        }
        Some(Step::Unlink {
            dir: gone.dir,
            id: gone.id,
        })
    }

    fn step_stat(&mut self) -> Option<Step> {
        if self.rng.below(1000) < STAT_MISS_PER_MILLE || self.files.is_empty() {
            let dir = self.rng.below(u64::from(DIRS)) as u16;
            let id = self.rng.below(1_000_000_000_000);
            return Some(Step::Stat {
                dir,
                id,
                missing: true,
            });
        }
        let f = self.files[self.rng.below(self.files.len() as u64) as usize];
        Some(Step::Stat {
            dir: f.dir,
            id: f.id,
            missing: false,
        })
    }

    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn attach(&mut self, slot: u8, file: usize) {
        self.handles[slot as usize] = Some(HandleState { file, pos: 0 });
        self.open += 1;
    }

    fn free_slot(&self) -> Option<u8> {
        self.handles[..self.max_open]
            .iter()
            .position(|h| h.is_none())
            .map(|i| i as u8)
    }

    /// A random open slot.
    fn open_slot(&mut self) -> Option<u8> {
        if self.open == 0 {
            return None;
        }
        let k = self.rng.below(self.open as u64) as usize;
        self.open_slots().nth(k)
    }

    /// A random open slot whose file holds at least `len` bytes.
    fn open_slot_holding(&mut self, len: u64) -> Option<u8> {
        let files = &self.files;
        let fits = |h: &Option<HandleState>| h.is_some_and(|h| files[h.file].size >= len);
        let n = self.handles.iter().filter(|h| fits(h)).count();
        if n == 0 {
            return None;
        }
        let k = self.rng.below(n as u64) as usize;
        let i = self
            .handles
            .iter()
            .enumerate()
            .filter(|(_, h)| fits(h))
            .nth(k)?
            .0;
        Some(i as u8)
    }

    /// A random closed file (a few tries: most files are closed).
    fn closed_file(&mut self) -> Option<usize> {
        if self.files.len() <= self.open {
            return None;
        }
        for _ in 0..32 {
            let i = self.rng.below(self.files.len() as u64) as usize;
            if self.files[i].handle.is_none() {
                return Some(i);
            }
        }
        None
    }
}

/// Length of a relative name `dNN/fNNNNNNNNNNNN` plus its NUL.
pub(super) const NAME_LEN: usize = 18;

/// Writes the NUL-terminated name of `dir/id` into `buf` (`x` instead of `f` for names
/// that never exist). No allocation.
#[inline]
pub(super) fn write_name(buf: &mut [u8; NAME_LEN], dir: u16, id: u64, missing: bool) {
    buf[0] = b'd';
    buf[1] = b'0' + ((dir / 10) % 10) as u8;
    buf[2] = b'0' + (dir % 10) as u8;
    buf[3] = b'/';
    buf[4] = if missing { b'x' } else { b'f' };
    let mut n = id;
    for i in (5..17).rev() {
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    buf[17] = 0;
}

/// The NUL-terminated name of subdirectory `dir` (`dNN`).
#[inline]
pub(super) fn dir_name(dir: u16) -> [u8; 4] {
    [
        b'd',
        b'0' + ((dir / 10) % 10) as u8,
        b'0' + (dir % 10) as u8,
        0,
    ]
}

#[cfg(test)]
#[path = "fileserver_mix_tests.rs"]
mod tests;
