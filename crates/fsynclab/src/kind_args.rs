//! The `run` options of the workload kinds beyond fileio.

use clap::Args;

use fsynclab::spec::{self, FileSync, FileioMode, Strategy, WorkloadKind, WorkloadSpec};

/// Kind selection and the options of smallfiles, fileserver and grouplog.
#[derive(Args, Debug, Default, Clone)]
pub struct KindArgs {
    /// Workload kind: fileio, smallfiles, fileserver or grouplog.
    #[arg(long, value_parser = str::parse::<WorkloadKind>, help_heading = "Workload")]
    pub kind: Option<WorkloadKind>,
    /// fileio request counting: fio (per thread) or sysbench (shared event sequence,
    /// fsync every N requests per file, fsyncs count as events).
    #[arg(long, value_parser = str::parse::<FileioMode>, help_heading = "sysbench mode")]
    pub mode: Option<FileioMode>,
    /// grouplog: solo, leader, delay:<µs>, adaptive, adaptive:<cap µs> or jbd.
    #[arg(long, value_parser = Strategy::parse, help_heading = "grouplog")]
    pub strategy: Option<Strategy>,
    /// grouplog: bytes per record.
    #[arg(long, value_parser = spec::parse_size, help_heading = "grouplog")]
    pub record_size: Option<u64>,
    /// grouplog: length of the circular log.
    #[arg(long, value_parser = spec::parse_size, help_heading = "grouplog")]
    pub log_size: Option<u64>,
    /// fileserver: number of clients (the same as --threads).
    #[arg(long, value_name = "N", help_heading = "fileserver")]
    pub clients: Option<u32>,
    /// smallfiles: files each thread creates.
    #[arg(long, value_name = "N", help_heading = "smallfiles")]
    pub files: Option<u64>,
    /// smallfiles: how each file is made durable: fsync, fdatasync, o_sync, none or syncfs.
    #[arg(long, value_parser = str::parse::<FileSync>, help_heading = "smallfiles")]
    pub file_sync: Option<FileSync>,
    /// smallfiles: set a 64-byte extended attribute on each file.
    #[arg(long, help_heading = "smallfiles")]
    pub xattr: bool,
    /// smallfiles: a timed chown phase over every file after the create phase.
    #[arg(long, help_heading = "smallfiles")]
    pub chown: bool,
    /// smallfiles: a timed unlink phase over every file at the end.
    #[arg(long, help_heading = "smallfiles")]
    pub unlink: bool,
}

impl KindArgs {
    /// Applies the kind and its options to `spec`; `file_size` goes to the small files
    /// when the kind is smallfiles.
    pub fn apply(&self, spec: &mut WorkloadSpec, file_size: Option<u64>) {
        if let Some(kind) = self.kind {
            spec.kind = kind;
        }
        if let Some(v) = self.mode {
            spec.mode = v;
        }
        if let Some(v) = self.files {
            spec.smallfiles.files_per_thread = v;
        }
        if let Some(v) = self.file_sync {
            spec.smallfiles.sync = v;
        }
        if self.xattr {
            spec.smallfiles.xattr = true;
        }
        if self.chown {
            spec.smallfiles.chown = true;
        }
        if self.unlink {
            spec.smallfiles.unlink = true;
        }
        if let Some(v) = self.clients {
            spec.threads = v;
        }
        if let Some(v) = self.strategy {
            spec.grouplog.strategy = v;
        }
        if let Some(v) = self.record_size {
            spec.grouplog.record_size = v;
        }
        if let Some(v) = self.log_size {
            spec.grouplog.log_size = v;
        }
        if let Some(v) = file_size {
            if spec.kind == WorkloadKind::Smallfiles {
                spec.smallfiles.file_size = v;
            } else {
                spec.file_size = v;
            }
        }
    }
}
