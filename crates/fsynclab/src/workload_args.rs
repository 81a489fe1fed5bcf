//! The workload flags of `run`, one per flag of the settings tables (`--bs`,
//! `--record-size`...): a kind's settings get their flags, help and `--help` heading from
//! their rows, so a new kind's flags need no code here. A flag is applied through the row it
//! names in the chosen kind's table, so `--file-size` sizes a smallfiles run's small files
//! and `--threads` a fileserver's clients; a flag no row of that kind has is refused.

use anyhow::anyhow;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::CliError;
use fsynclab::spec::{self, KINDS, KindDef, SettingDef, Ty, WorkloadKind, WorkloadSpec};

/// Flags of table rows that `run` declares by hand: `--settle` comes with `--no-settle`.
const BY_HAND: [&str; 1] = ["settle"];

/// The order of the headings the generated flags sit under (`run --help` reads by kind):
/// the workload's, fileio's and its sysbench mode's, then every other kind's in the
/// registry's order, then the run control's.
pub fn heading_order() -> Vec<&'static str> {
    let kinds = KINDS
        .iter()
        .map(|k| k.kind.as_str())
        .filter(|k| *k != "fileio");
    ["Workload", "fileio", "sysbench mode"]
        .into_iter()
        .chain(kinds)
        .chain(["Run control"])
        .collect()
}

/// The workload flags given, in the order of [`flag_rows`].
#[derive(Clone, Debug, Default)]
pub struct WorkloadArgs {
    /// The kind chosen with `--kind`.
    pub kind: Option<WorkloadKind>,
    /// Each flag given (without dashes) and its value (`true` for an on/off flag).
    pub given: Vec<(&'static str, String)>,
}

/// One row per distinct flag (the first row that has it gives its help and heading), in
/// heading order, then table order.
pub fn flag_rows() -> Vec<&'static SettingDef> {
    let mut rows: Vec<&'static SettingDef> = Vec::new();
    for def in spec::all_settings() {
        let Some(flag) = def.flag else { continue };
        if BY_HAND.contains(&flag) || rows.iter().any(|r| r.flag == def.flag) {
            continue;
        }
        rows.push(def);
    }
    let order = heading_order();
    rows.sort_by_key(|d| order.iter().position(|h| *h == d.heading));
    rows
}

/// A flag's value checked by its row's type, as clap reports a bad value
/// (`invalid value 'x' for '--sync <NAME>': ...`).
fn check(ty: &'static Ty, text: &str) -> Result<String, String> {
    let t = text.trim();
    match ty.inner() {
        Ty::Count { min, max } => t
            .parse::<u64>()
            .map(|_| ())
            .map_err(|_| format!("'{t}' is not a whole number; write one from {min} to {max}")),
        Ty::Size { .. } => spec::parse_size(t).map(|_| ()),
        Ty::Seconds { .. } => t
            .parse::<f64>()
            .map(|_| ())
            .map_err(|_| format!("'{t}' is not a number of seconds; write e.g. 10 or 0.5")),
        Ty::Choice(names) => match names.contains(&t) {
            true => Ok(()),
            false => Err(format!("'{t}' is not one of {}", names.join(", "))),
        },
        Ty::FlagSet(names) => t
            .split(',')
            .map(|w| w.trim().to_ascii_lowercase())
            .filter(|w| !w.is_empty())
            .find(|w| w != "none" && !names.contains(&w.trim_start_matches("o_")))
            .map_or(Ok(()), |w| {
                Err(format!(
                    "unknown name '{w}'; use {}, comma-separated",
                    names.join(", ")
                ))
            }),
        Ty::Text(parse) => parse(t),
        Ty::Flag | Ty::Optional(_) => Ok(()),
    }
    .map(|()| t.to_string())
}

/// A flag's help as `--help` shows it: its row's, with the other rows' that share the flag
/// and say something else ("grouplog: bytes per record; append: ..."), each without the
/// closing full stop, as clap shows doc comments (an ellipsis stays).
fn help_of(def: &SettingDef) -> String {
    let trim = |h: &'static str| match h.strip_suffix('.') {
        Some(t) if !t.ends_with("..") => t,
        _ => h,
    };
    let mut helps = vec![trim(def.help)];
    for other in spec::all_settings() {
        if other.flag == def.flag && !helps.contains(&trim(other.help)) {
            helps.push(trim(other.help));
        }
    }
    helps.join("; ")
}

/// A value's name in `--help`: the kind of number (`N`, `SIZE`, `S`), else the flag's
/// own (`--sync <SYNC>`).
fn value_name(flag: &'static str, ty: &Ty) -> String {
    match ty.value_name() {
        "N" | "SIZE" | "S" => ty.value_name().to_string(),
        _ => flag.replace('-', "_").to_ascii_uppercase(),
    }
}

/// The `--kind` help: the kinds the tables have.
fn kind_help() -> String {
    let names: Vec<_> = KINDS.iter().map(|k| k.kind.as_str()).collect();
    format!("Workload kind: {}", names.join(", "))
}

impl clap::Args for WorkloadArgs {
    fn augment_args(cmd: Command) -> Command {
        // `run` takes a fio job file instead of these flags; other commands have none.
        let job = cmd.get_arguments().any(|a| a.get_id() == "fio_job");
        let exclusive = |arg: Arg| {
            if job {
                arg.conflicts_with("fio_job")
            } else {
                arg
            }
        };
        let kind = Arg::new("kind")
            .long("kind")
            .help(kind_help())
            .help_heading("Workload")
            .value_name("KIND")
            .value_parser(|s: &str| s.parse::<WorkloadKind>());
        let mut cmd = cmd.arg(exclusive(kind));
        for def in flag_rows() {
            let flag = def.flag.unwrap_or_default();
            let arg = exclusive(
                Arg::new(flag)
                    .long(flag)
                    .help(help_of(def))
                    .help_heading(def.heading),
            );
            let arg = match def.ty.inner() {
                Ty::Flag => arg.action(ArgAction::SetTrue),
                ty => arg
                    .action(ArgAction::Set)
                    .value_name(value_name(flag, ty))
                    .value_parser(move |s: &str| check(&def.ty, s)),
            };
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for WorkloadArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for def in flag_rows() {
            let flag = def.flag.unwrap_or_default();
            match def.ty.inner() {
                Ty::Flag if m.get_flag(flag) => given.push((flag, "true".to_string())),
                Ty::Flag => {}
                _ => {
                    if let Some(v) = m.get_one::<String>(flag) {
                        given.push((flag, v.clone()));
                    }
                }
            }
        }
        let kind = m.get_one::<WorkloadKind>("kind").copied();
        Ok(Self { kind, given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl WorkloadArgs {
    /// Whether `--flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.given.iter().any(|(f, _)| *f == flag)
    }

    /// `spec` with the kind, then every flag, applied through the chosen kind's rows (on
    /// the flat form, so a kind chosen after a preset's keeps the settings they share). A
    /// flag of a setting the kind does not have is refused.
    pub fn apply(&self, spec: WorkloadSpec) -> Result<WorkloadSpec, CliError> {
        let mut flat = spec.flat();
        if let Some(kind) = self.kind {
            flat.kind = kind;
        }
        let table = spec::kind_def(flat.kind);
        for (flag, value) in &self.given {
            let own = table.and_then(|t| row_of(t, flag));
            let Some(def) = own.or_else(|| any_row(flag)) else {
                continue;
            };
            if let (Some(table), None) = (table, own) {
                return Err(not_of_kind(table, flag));
            }
            flat =
                spec::set_value(&flat, def, value).map_err(|e| value_error(flag, value, def, e))?;
        }
        Ok(flat.typed())
    }
}

/// The first row with `--flag`.
fn any_row(flag: &str) -> Option<&'static SettingDef> {
    spec::all_settings()
        .into_iter()
        .find(|d| d.flag == Some(flag))
}

/// The row of `table` that `--flag` sets: the kind's own row with that flag, else its row
/// of a setting the flag names elsewhere (`--threads` on fileserver is its clients).
fn row_of(table: &KindDef, flag: &str) -> Option<&'static SettingDef> {
    table.by_flag(flag).or_else(|| {
        spec::all_settings()
            .iter()
            .filter(|d| d.flag == Some(flag))
            .find_map(|d| table.setting(d.key))
    })
}

/// A flag of settings `table`'s kind does not have, refused with the kinds that have it.
fn not_of_kind(table: &KindDef, flag: &str) -> CliError {
    let owners: Vec<&str> = KINDS
        .iter()
        .filter(|k| row_of(k, flag).is_some())
        .map(|k| k.kind.as_str())
        .collect();
    // The kind's own setting for the same thing, if it has one.
    let instead = any_row(flag)
        .and_then(|def| table.instead.iter().find(|(key, ..)| *key == def.key))
        .and_then(|(_, own, value)| Some(format!("--{} {value}", own.flag?)))
        .map(|own| format!("; {} runs have {own} instead", table.kind.as_str()))
        .unwrap_or_default();
    CliError::usage(anyhow!(
        "--{flag} is a setting of {} runs, not of {} runs{instead}; drop --{flag}, or choose \
         one of those kinds with --kind",
        owners.join(" and "),
        table.kind.as_str()
    ))
}

/// A value the setting's field cannot hold (`--threads 99999999999`), named by its flag,
/// with the row's range when it has one.
fn value_error(flag: &str, value: &str, def: &SettingDef, e: spec::SpecError) -> CliError {
    let range = match def.ty.inner() {
        Ty::Count { min, max } => format!("use {min} to {max}"),
        Ty::Size { min, max } => format!(
            "use {} to {}",
            spec::format_size(*min),
            spec::format_size(*max)
        ),
        _ => e.fix.to_string(),
    };
    CliError::usage(anyhow!("--{flag} {value}: {}; {range}", e.problem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_flag_but_the_hand_written_ones_is_generated_once() {
        let rows = flag_rows();
        for def in spec::all_settings() {
            let Some(flag) = def.flag else { continue };
            let n = rows.iter().filter(|r| r.flag == Some(flag)).count();
            assert_eq!(n, usize::from(!BY_HAND.contains(&flag)), "--{flag}");
        }
        let order = heading_order();
        for pair in rows.windows(2) {
            let rank = |d: &SettingDef| order.iter().position(|h| *h == d.heading);
            assert!(
                rank(pair[0]) <= rank(pair[1]),
                "{} before {}",
                pair[0].key,
                pair[1].key
            );
            assert!(
                rank(pair[0]).is_some(),
                "{}: heading {}",
                pair[0].key,
                pair[0].heading
            );
        }
    }

    #[test]
    fn values_are_checked_by_their_rows_type() {
        let sync = &spec::kinds::common::SYNC;
        assert_eq!(check(&sync.ty, " fdatasync"), Ok("fdatasync".into()));
        assert!(
            check(&sync.ty, "fsinc")
                .unwrap_err()
                .contains("not one of fsync")
        );
        let flags = &spec::kinds::common::OPEN_FLAGS;
        assert!(check(&flags.ty, "O_DSYNC,direct").is_ok());
        assert!(check(&flags.ty, "dsync,fua").unwrap_err().contains("'fua'"));
        let bs = &spec::kinds::fileio::BLOCK_SIZE;
        assert!(check(&bs.ty, "4k").is_ok() && check(&bs.ty, "4q").is_err());
        let strategy = &spec::kinds::grouplog::STRATEGY;
        assert!(check(&strategy.ty, "delay:500").is_ok());
        assert!(check(&strategy.ty, "delay").is_err());
    }
}
