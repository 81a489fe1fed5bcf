//! Writing report files without following links or replacing what fsynclab did not make.
//!
//! fsynclab runs as root; `report --out /tmp/r.png` must not write through a symlink
//! another user planted there, nor replace an existing file unasked. Each file is written
//! to a fresh temporary file in the same directory (`O_CREAT|O_EXCL|O_NOFOLLOW`, through a
//! descriptor of that directory), synced, and renamed into place: with `RENAME_NOREPLACE`
//! unless replacing was asked for (a file created meanwhile is still not replaced), and a
//! rename replaces a symlink itself, never the file it points to.

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, RenameFlags, openat, renameat, renameat2};
use nix::sys::stat::{Mode, SFlag, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::analysis::Comparison;
use crate::spec::{Neutral, Setting, SettingNames, Worded};

/// Extensions a report can be written as.
pub const REPORT_FORMATS: [&str; 5] = ["png", "svg", "md", "csv", "json"];

/// Why a report file was not written; each names the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The extension names no format.
    #[error(
        "cannot tell the format of {path}; end the file name in .png, .svg, .md, .csv or .json"
    )]
    UnknownFormat {
        /// The path given.
        path: PathBuf,
    },
    /// The file exists and replacing it was not asked for.
    #[error("{}", self.worded(&Neutral))]
    Exists {
        /// The file.
        path: PathBuf,
        /// `" (the image the .md report embeds)"` when it is not the file asked for.
        part: &'static str,
        /// `" (a symbolic link)"` when it is one.
        link: &'static str,
    },
    /// A directory or special file sits at the path.
    #[error("{path} is a {kind}, not a file; choose a file path")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: &'static str,
    },
    /// The directory is the kernel's or the devices' (/dev, /proc, /sys): no report goes
    /// there (`/dev/null.csv` would be a new file among the device nodes).
    #[error(
        "{path} is in {dir}, the kernel's or the devices' directory; write the report to a \
         directory of your own"
    )]
    SystemDir {
        /// The file.
        path: PathBuf,
        /// The directory it resolved to.
        dir: PathBuf,
    },
    /// The directory the file would go in is not there (or is not a directory).
    #[error("{path}: its directory {dir} does not exist; create it first or choose another path")]
    NoDirectory {
        /// The file.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// The report could not be rendered.
    #[error("cannot render the report: {0}")]
    Render(String),
    /// The directory or file could not be written.
    #[error(
        "cannot write {path}: {source}; check the directory exists and is writable (under \
         sudo: writable by you, as fsynclab writes files with your rights)"
    )]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Worded for OutputError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        match self {
            OutputError::Exists { path, part, link } => format!(
                "{}{part} already exists{link}; choose another file, or replace it with {} \
                 (a link is replaced, never written through)",
                path.display(),
                names.name(Setting::Force, None)
            ),
            other => other.to_string(),
        }
    }
}

impl OutputError {
    /// True when the user's choice of path is at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            OutputError::UnknownFormat { .. }
                | OutputError::SystemDir { .. }
                | OutputError::NoDirectory { .. }
                | OutputError::Exists { .. }
                | OutputError::NotAFile { .. }
        )
    }
}

/// The lower-case extension of `out` when it is a report format.
pub fn report_format(out: &Path) -> Result<String, OutputError> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if REPORT_FORMATS.contains(&ext.as_str()) {
        Ok(ext)
    } else {
        Err(OutputError::UnknownFormat {
            path: out.to_path_buf(),
        })
    }
}

/// How one kind of report is written in each format (see [`files_by_format`]).
struct Formats<'a> {
    csv: Box<dyn FnOnce() -> Result<String, OutputError> + 'a>,
    json: Box<dyn FnOnce() -> Result<String, OutputError> + 'a>,
    image: Box<dyn Fn(super::ImageFormat) -> Result<Vec<u8>, super::ReportError> + 'a>,
    /// The Markdown, given the file name of the PNG written beside it.
    markdown: Box<dyn FnOnce(&str) -> String + 'a>,
}

/// The files a report at `out` consists of, by its extension: (path, bytes), the PNG
/// before the Markdown that embeds it (`.md` writes `name.png` beside it). Text formats
/// have control characters escaped (stored labels may hold some).
fn files_by_format(out: &Path, f: Formats<'_>) -> Result<Vec<(PathBuf, Vec<u8>)>, OutputError> {
    let ext = report_format(out)?;
    let image = |format| (f.image)(format).map_err(|e| OutputError::Render(e.to_string()));
    let text = |s: String| crate::spec::escape_control(&s).into_owned().into_bytes();
    Ok(match ext.as_str() {
        "csv" => vec![(out.to_path_buf(), text((f.csv)()?))],
        "json" => vec![(out.to_path_buf(), text((f.json)()?))],
        "png" => vec![(out.to_path_buf(), image(super::ImageFormat::Png)?)],
        "svg" => {
            let svg = String::from_utf8_lossy(&image(super::ImageFormat::Svg)?).into_owned();
            vec![(out.to_path_buf(), text(svg))]
        }
        _ => {
            let png = out.with_extension("png");
            let name = png
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("report.png")
                .to_string();
            let bytes = image(super::ImageFormat::Png)?;
            vec![(png, bytes), (out.to_path_buf(), text((f.markdown)(&name)))]
        }
    })
}

fn render_err(e: impl std::fmt::Display) -> OutputError {
    OutputError::Render(e.to_string())
}

/// The files a comparison report at `out` consists of, by extension (`png`, `svg`, `md`
/// with its PNG beside it, `csv`, `json`).
pub fn report_files(
    c: &Comparison,
    out: &Path,
    title: &str,
) -> Result<Vec<(PathBuf, Vec<u8>)>, OutputError> {
    let defaults = super::ImageOptions::default();
    // The page grows to fit the comparison's tables (a kernel-traced comparison with
    // durable rows needs more than the default height).
    let opts = super::ImageOptions {
        title: Some(title.to_string()),
        height: defaults
            .height
            .max(super::image::min_page_height(c, defaults.width)),
        ..defaults
    };
    files_by_format(
        out,
        Formats {
            csv: Box::new(|| Ok(super::compare_csv(c))),
            json: Box::new(|| super::compare_json(c).map_err(render_err)),
            image: Box::new(move |format| super::render_comparison(c, format, &opts)),
            markdown: Box::new(|png| super::compare_markdown(c, title, Some(png))),
        },
    )
}

/// The files of a trend report at `out`, as [`report_files`] makes them for a comparison.
pub fn trend_files(
    t: &crate::analysis::Trend,
    of: &str,
    out: &Path,
) -> Result<Vec<(PathBuf, Vec<u8>)>, OutputError> {
    files_by_format(
        out,
        Formats {
            csv: Box::new(|| Ok(super::trend_csv(t))),
            json: Box::new(|| Ok(super::trend_json(t).to_string())),
            image: Box::new(|format| super::render_trend(t, of, format)),
            markdown: Box::new(|png| super::trend_markdown(t, of, Some(png))),
        },
    )
}

/// The files of an advice report at `out`, as [`report_files`] makes them: the image (the
/// frontier, the sync-parallelism plot, the strategies), its Markdown, the JSON of `advise
/// --json`, or one CSV row per strategy and writer count.
pub fn advice_files(
    a: &crate::analysis::Advice,
    out: &Path,
) -> Result<Vec<(PathBuf, Vec<u8>)>, OutputError> {
    files_by_format(
        out,
        Formats {
            csv: Box::new(|| Ok(super::advice::advice_csv(a))),
            json: Box::new(|| {
                let doc = super::versioned([("advice", super::advice_json(a))]);
                Ok(serde_json::to_string_pretty(&doc).unwrap_or_default())
            }),
            image: Box::new(|format| super::render_advice(a, format)),
            markdown: Box::new(|png| {
                let mut md = super::advice_markdown(a);
                md.push_str(&format!(
                    "\n![advice]({})\n",
                    super::compare::md_escape(png)
                ));
                md
            }),
        },
    )
}

/// The files of a ranking report at `out`, as [`report_files`] makes them.
pub fn rank_files(
    r: &crate::analysis::Ranking,
    of: &str,
    out: &Path,
    title: &str,
) -> Result<Vec<(PathBuf, Vec<u8>)>, OutputError> {
    files_by_format(
        out,
        Formats {
            csv: Box::new(|| super::rank_csv(r).map_err(render_err)),
            json: Box::new(|| Ok(super::rank_json(r, of).to_string())),
            image: Box::new(|format| super::render_ranking(r, of, format)),
            markdown: Box::new(|png| {
                let mut md = super::rank_markdown(r, title);
                md.push_str(&format!(
                    "\n![ranking]({})\n",
                    super::compare::md_escape(png)
                ));
                md
            }),
        },
    )
}

/// The directory of `path` opened as a descriptor, and the file name in it.
fn open_parent(path: &Path) -> Result<(OwnedFd, std::ffi::OsString), OutputError> {
    let io = |source: std::io::Error| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let name = path.file_name().ok_or_else(|| OutputError::NotAFile {
        path: path.to_path_buf(),
        kind: "directory",
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fd = nix::fcntl::open(
        dir,
        OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::ENOENT | Errno::ENOTDIR => OutputError::NoDirectory {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        },
        e => io(e.into()),
    })?;
    Ok((fd, name.to_os_string()))
}

/// Directories no report is written into, as the opened directory resolves.
const SYSTEM_DIRS: [&str; 3] = ["/dev", "/proc", "/sys"];

/// Refuses a directory under [`SYSTEM_DIRS`] (resolved through the held descriptor, so a
/// link to one is caught) or on a proc or sysfs mount elsewhere.
fn refuse_system_dir(path: &Path, dir: &OwnedFd) -> Result<(), OutputError> {
    use std::os::fd::AsRawFd;
    let resolved = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())).ok();
    let kernel_fs = nix::sys::statfs::fstatfs(dir).is_ok_and(|st| {
        let kind = st.filesystem_type();
        kind == nix::sys::statfs::PROC_SUPER_MAGIC || kind == nix::sys::statfs::SYSFS_MAGIC
    });
    let under = resolved
        .as_ref()
        .is_some_and(|d| SYSTEM_DIRS.iter().any(|s| d.starts_with(s)));
    if under || kernel_fs {
        return Err(OutputError::SystemDir {
            path: path.to_path_buf(),
            dir: resolved.unwrap_or_else(|| path.parent().unwrap_or(path).to_path_buf()),
        });
    }
    Ok(())
}

/// Checks, before anything is measured, that a report can be written at `out`: its format,
/// and nothing there (nor at the PNG a `.md` writes beside it) that may not be replaced.
pub fn check_report_destination(out: &Path, force: bool) -> Result<(), OutputError> {
    let ext = report_format(out)?;
    check_destination(out, force)?;
    if ext == "md" {
        check_destination(&out.with_extension("png"), force)?;
    }
    Ok(())
}

/// Refuses `path` when something is there that may not be replaced.
fn check_destination(path: &Path, force: bool) -> Result<(), OutputError> {
    let (dir, name) = open_parent(path)?;
    refuse_system_dir(path, &dir)?;
    match fstatat(
        &dir,
        name.as_os_str(),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    ) {
        Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(OutputError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        }),
        Ok(st) => {
            let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
            let not_a_file = |kind| {
                Err(OutputError::NotAFile {
                    path: path.to_path_buf(),
                    kind,
                })
            };
            match kind {
                SFlag::S_IFREG | SFlag::S_IFLNK if force => Ok(()),
                SFlag::S_IFREG => Err(OutputError::Exists {
                    part: "",
                    path: path.to_path_buf(),
                    link: "",
                }),
                SFlag::S_IFLNK => Err(OutputError::Exists {
                    part: "",
                    path: path.to_path_buf(),
                    link: " (a symbolic link)",
                }),
                SFlag::S_IFDIR => not_a_file("directory"),
                _ => not_a_file("special file"),
            }
        }
    }
}

/// Writes one file through a temporary file and a rename (see the module docs).
fn write_one(path: &Path, bytes: &[u8], force: bool) -> Result<(), OutputError> {
    let io = |source: std::io::Error| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (dir, name) = open_parent(path)?;
    let tmp = format!(
        ".{}.fsynclab-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    );
    let fd = openat(
        &dir,
        tmp.as_str(),
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .map_err(|e| io(e.into()))?;
    let mut file = std::fs::File::from(fd);
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io);
    drop(file);
    let placed = written.and_then(|()| {
        let moved = if force {
            renameat(&dir, tmp.as_str(), &dir, name.as_os_str())
        } else {
            renameat2(
                &dir,
                tmp.as_str(),
                &dir,
                name.as_os_str(),
                RenameFlags::RENAME_NOREPLACE,
            )
        };
        match moved {
            Ok(()) => Ok(()),
            Err(Errno::EEXIST) => Err(OutputError::Exists {
                part: "",
                path: path.to_path_buf(),
                link: "",
            }),
            // A filesystem without RENAME_NOREPLACE: a hard link refuses an existing name
            // just as well.
            Err(Errno::EINVAL) if !force => nix::unistd::linkat(
                &dir,
                tmp.as_str(),
                &dir,
                name.as_os_str(),
                nix::fcntl::AtFlags::empty(),
            )
            .map_err(|e| match e {
                Errno::EEXIST => OutputError::Exists {
                    part: "",
                    path: path.to_path_buf(),
                    link: "",
                },
                e => io(e.into()),
            }),
            Err(e) => Err(io(e.into())),
        }
    });
    // Gone after a rename; the leftover name after a link or a failure.
    let _ = unlinkat(&dir, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
    placed
}

/// Writes every file (see the module docs). All destinations are checked first, so a
/// refusal leaves none of them written; `force` replaces existing files (and links,
/// without following them).
/// Under `sudo fsynclab` the checks and writes run with the invoking user's filesystem
/// identity ([`crate::probe::with_invoking_user_files`]): the files are the user's, and
/// only where the user may write.
pub fn write_report_files(files: &[(PathBuf, Vec<u8>)], force: bool) -> Result<(), OutputError> {
    crate::probe::with_invoking_user_files(|| write_all(files, force))
}

fn write_all(files: &[(PathBuf, Vec<u8>)], force: bool) -> Result<(), OutputError> {
    let asked = files.last().map(|(path, _)| path);
    for (path, _) in files {
        check_destination(path, force).map_err(|e| match e {
            OutputError::Exists { path, link, .. } if Some(&path) != asked => OutputError::Exists {
                part: " (the image the .md report embeds)",
                path,
                link,
            },
            e => e,
        })?;
    }
    for (path, bytes) in files {
        write_one(path, bytes, force)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path, name: &str, text: &str) -> Vec<(PathBuf, Vec<u8>)> {
        vec![(dir.join(name), text.as_bytes().to_vec())]
    }

    #[test]
    fn no_report_goes_into_dev_proc_or_sys() {
        for dir in ["/dev", "/proc", "/sys/kernel", "/dev/shm"] {
            let out = Path::new(dir).join("fsynclab-report-test.csv");
            match write_report_files(
                &files(Path::new(dir), "fsynclab-report-test.csv", "a\n"),
                true,
            ) {
                Err(e @ OutputError::SystemDir { .. }) => assert!(e.is_usage(), "{e}"),
                other => panic!("{dir}: {other:?}"),
            }
            assert!(
                std::fs::symlink_metadata(&out).is_err(),
                "{} was created",
                out.display()
            );
        }
        // A link to /dev is caught through the opened directory.
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("devlink");
        std::os::unix::fs::symlink("/dev", &link).unwrap();
        assert!(matches!(
            write_report_files(&files(&link, "x.csv", "a\n"), true),
            Err(OutputError::SystemDir { .. })
        ));
    }

    #[test]
    fn a_new_file_is_written_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        write_report_files(&files(dir.path(), "r.csv", "a,b\n"), false).unwrap();
        assert_eq!(std::fs::read(dir.path().join("r.csv")).unwrap(), b"a,b\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn an_existing_image_beside_an_md_report_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.png"), b"mine").unwrap();
        let both = vec![
            (dir.path().join("r.png"), b"png".to_vec()),
            (dir.path().join("r.md"), b"md".to_vec()),
        ];
        let text = write_report_files(&both, false).unwrap_err().to_string();
        assert!(
            text.contains("r.png (the image the .md report embeds) already exists"),
            "{text}"
        );
        assert!(!dir.path().join("r.md").exists());
        // The file asked for itself is named plainly.
        let text = write_report_files(&files(dir.path(), "r.png", "x"), false)
            .unwrap_err()
            .to_string();
        assert!(!text.contains("embeds"), "{text}");
    }

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(&path, "mine").unwrap();
        let e = write_report_files(&files(dir.path(), "r.csv", "new"), false).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("with force"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        write_report_files(&files(dir.path(), "r.csv", "new"), true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn a_planted_symlink_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("r.csv");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_report_files(&files(dir.path(), "r.csv", "x"), false).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // Forced: the link itself is replaced; the file it pointed to is untouched.
        write_report_files(&files(dir.path(), "r.csv", "x"), true).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "x");
    }

    #[test]
    fn a_refusal_writes_none_of_the_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.md"), "mine").unwrap();
        let both = vec![
            (dir.path().join("r.png"), b"png".to_vec()),
            (dir.path().join("r.md"), b"md".to_vec()),
        ];
        assert!(write_report_files(&both, false).is_err());
        assert!(!dir.path().join("r.png").exists());
        let e = write_report_files(&files(dir.path(), "", "x"), true).unwrap_err();
        assert!(e.is_usage(), "{e}");
        std::fs::create_dir(dir.path().join("d.csv")).unwrap();
        let e = write_report_files(&files(dir.path(), "d.csv", "x"), true).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }
}
