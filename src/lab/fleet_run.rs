//! Running a checked fleet ([`ValidFleet`]): the reachability check, then each repetition
//! on every host at once (one `fio` client each, see `fleet_fio`), each host's result
//! parsed and stored as it arrives, in the host's experiment (see the `fleet` module).

use std::sync::mpsc;
use std::time::Duration;

use super::fleet::{FleetError, ValidFleet};
use super::fleet_fio::{self, ClientEnd, JobDir};
use super::fleet_probe;
use super::fleet_store;
use crate::engine::CancelToken;
use crate::fio::client::FleetHost;
use crate::store::Store;

/// How long a reachability check waits for each host's TCP connect.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether one host answered the reachability check.
#[derive(Clone, Debug, PartialEq)]
pub struct HostStatus {
    /// The host.
    pub host: FleetHost,
    /// The time its TCP connect took, or why it failed.
    pub reachable: Result<Duration, String>,
}

/// Checks every host at once (a TCP connect each, within `timeout`); answers in `hosts`'
/// order. A host whose name lookup hangs past the timeout (plus a little) is reported as
/// not answering; the lookup finishes on its own thread.
pub fn check_hosts(hosts: &[FleetHost], timeout: Duration) -> Vec<HostStatus> {
    let (tx, rx) = mpsc::channel();
    for (i, host) in hosts.iter().enumerate() {
        let thread_tx = tx.clone();
        let host = host.clone();
        let spawned = std::thread::Builder::new()
            .name("fsynclab-fleet-check".into())
            .spawn(move || {
                let _ = thread_tx.send((i, fleet_probe::probe_host(&host, timeout)));
            });
        if let Err(e) = spawned {
            let _ = tx.send((i, Err(format!("cannot start the check: {e}"))));
        }
    }
    drop(tx);
    let mut answers: Vec<Option<Result<Duration, String>>> = vec![None; hosts.len()];
    let deadline = std::time::Instant::now() + timeout + Duration::from_secs(2);
    while answers.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, answer)) => answers[i] = Some(answer),
            Err(_) => break,
        }
    }
    hosts
        .iter()
        .zip(answers)
        .map(|(host, answer)| HostStatus {
            host: host.clone(),
            reachable: answer.unwrap_or_else(|| {
                Err(format!(
                    "no answer within {:.0} s (is the name lookup hanging?)",
                    timeout.as_secs_f64()
                ))
            }),
        })
        .collect()
}

/// What happens during a fleet run, in order, for a front end to show.
#[derive(Clone, Debug, PartialEq)]
pub enum FleetEvent {
    /// Every host answered the reachability check (with the times).
    Checked(Vec<HostStatus>),
    /// Repetition `repetition` (1-based) started on host `host` (an index into the hosts).
    Started {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
    },
    /// The host's result for the repetition is stored.
    Stored {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
        /// The stored runs (one per fio job, or group-reported job).
        run_ids: Vec<i64>,
    },
    /// The host's repetition failed; nothing of it is stored.
    Failed {
        /// The host's index.
        host: usize,
        /// The repetition.
        repetition: u32,
        /// Why.
        error: String,
    },
}

/// One host's share of a fleet run.
#[derive(Clone, Debug, PartialEq)]
pub struct HostOutcome {
    /// The host.
    pub host: FleetHost,
    /// Its runs' label.
    pub label: String,
    /// Its experiment (made when its first result is stored).
    pub experiment_id: Option<i64>,
    /// Its stored runs.
    pub run_ids: Vec<i64>,
    /// Its failed repetitions: (repetition, why).
    pub errors: Vec<(u32, String)>,
}

/// What a fleet run did.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetOutcome {
    /// Per host, in the order given.
    pub hosts: Vec<HostOutcome>,
    /// Cancel was asked: the clients in flight were stopped and stored nothing.
    pub cancelled: bool,
}

impl FleetOutcome {
    /// Whether every repetition on every host was stored.
    pub fn all_stored(&self) -> bool {
        !self.cancelled && self.hosts.iter().all(|h| h.errors.is_empty())
    }
}

/// Runs `fleet`: checks every host (refusing to start when one is down), then each
/// repetition on all hosts at once, storing each host's result as it arrives. `events`
/// is called on this thread. Cancel stops the clients in flight (their servers stop the
/// job); what was stored before stays.
pub fn run_fleet(
    store: &Store,
    fleet: &ValidFleet,
    events: &mut dyn FnMut(FleetEvent),
    cancel: &CancelToken,
) -> Result<FleetOutcome, FleetError> {
    let statuses = check_hosts(&fleet.hosts, CHECK_TIMEOUT);
    let down: Vec<String> = statuses
        .iter()
        .filter_map(|s| {
            s.reachable
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", s.host))
        })
        .collect();
    if !down.is_empty() {
        return Err(FleetError::Unreachable {
            down,
            total: fleet.hosts.len(),
        });
    }
    if let Some((first, second, addr)) = fleet_probe::same_server(&fleet.hosts) {
        return Err(FleetError::SameServer {
            first: first.to_string(),
            second: second.to_string(),
            addr: addr.to_string(),
        });
    }
    events(FleetEvent::Checked(statuses));
    let parent = std::env::temp_dir();
    let job_dir =
        JobDir::create(&parent, &fleet.job_text).map_err(|source| FleetError::JobDir {
            dir: parent.display().to_string(),
            source,
        })?;
    let mut outcome = FleetOutcome {
        hosts: fleet
            .hosts
            .iter()
            .map(|host| HostOutcome {
                host: host.clone(),
                label: fleet.run_label(host),
                experiment_id: None,
                run_ids: Vec::new(),
                errors: Vec::new(),
            })
            .collect(),
        cancelled: false,
    };
    for repetition in 1..=fleet.repeat {
        if cancel.is_cancelled() {
            break;
        }
        run_repetition(
            store,
            fleet,
            &job_dir,
            repetition,
            &mut outcome,
            events,
            cancel,
        )?;
    }
    outcome.cancelled = cancel.is_cancelled();
    Ok(outcome)
}

/// One repetition: a client per host on its own thread; each result is parsed and stored
/// on this thread as it arrives.
fn run_repetition(
    store: &Store,
    fleet: &ValidFleet,
    job_dir: &JobDir,
    repetition: u32,
    outcome: &mut FleetOutcome,
    events: &mut dyn FnMut(FleetEvent),
    cancel: &CancelToken,
) -> Result<(), FleetError> {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| -> Result<(), FleetError> {
        for (i, host) in fleet.hosts.iter().enumerate() {
            let thread_tx = tx.clone();
            let args = crate::fio::client::client_args(host, &job_dir.job_file());
            events(FleetEvent::Started {
                host: i,
                repetition,
            });
            let spawned = std::thread::Builder::new()
                .name("fsynclab-fleet-client".into())
                .spawn_scoped(scope, move || {
                    let end = fleet_fio::run_client(
                        &fleet.fio,
                        &args,
                        job_dir.path(),
                        fleet.timeout,
                        cancel,
                    );
                    let _ = thread_tx.send((i, end));
                });
            if let Err(e) = spawned {
                let _ = tx.send((i, Err(e)));
            }
        }
        drop(tx);
        for (i, end) in rx {
            let host = &fleet.hosts[i];
            let stored = match end {
                Ok(ClientEnd::Cancelled) => continue,
                Ok(end) => client_result(fleet, host, end).and_then(|stdout| {
                    store_host(store, fleet, host, &stdout, &mut outcome.hosts[i])
                }),
                Err(e) => Err(format!("cannot start {}: {e}", fleet.fio.display())),
            };
            match stored {
                Ok(run_ids) => events(FleetEvent::Stored {
                    host: i,
                    repetition,
                    run_ids,
                }),
                Err(error) => {
                    outcome.hosts[i].errors.push((repetition, error.clone()));
                    events(FleetEvent::Failed {
                        host: i,
                        repetition,
                        error,
                    });
                }
            }
        }
        Ok(())
    })
}

/// A client's stdout when it ended well, or why its result is not usable.
fn client_result(fleet: &ValidFleet, host: &FleetHost, end: ClientEnd) -> Result<String, String> {
    match end {
        ClientEnd::Exited {
            status,
            stdout,
            truncated,
            stderr,
        } => {
            if truncated {
                return Err(format!(
                    "fio's output for {host} is over {} MiB; split the job",
                    fleet_fio::MAX_STDOUT_BYTES >> 20
                ));
            }
            if !status.success() {
                let why = fleet_fio::tail(&stderr, 4);
                let why = if why.is_empty() {
                    fleet_fio::tail(&stdout, 4)
                } else {
                    why
                };
                return Err(format!("fio ended with {status} for {host}: {why}"));
            }
            Ok(stdout)
        }
        ClientEnd::TimedOut { stderr } => Err(format!(
            "no result from {host} within {} s, fio was stopped{}; raise the timeout if the \
             job needs longer",
            fleet.timeout.as_secs(),
            match fleet_fio::tail(&stderr, 2) {
                t if t.is_empty() => String::new(),
                t => format!(" ({t})"),
            }
        )),
        ClientEnd::Cancelled => Err("cancelled".into()),
    }
}

/// Parses one host's output and stores its runs in the host's experiment (made on first
/// use, once there is something to store).
fn store_host(
    store: &Store,
    fleet: &ValidFleet,
    host: &FleetHost,
    stdout: &str,
    outcome: &mut HostOutcome,
) -> Result<Vec<i64>, String> {
    let runs = fleet_store::host_runs(fleet, host, stdout)?;
    let experiment_id = match outcome.experiment_id {
        Some(id) => id,
        None => {
            let id = store
                .create_experiment(&fleet.experiment_name(host))
                .map_err(|e| format!("cannot store the result of {host}: {e}"))?;
            outcome.experiment_id = Some(id);
            id
        }
    };
    let ids = fleet_store::store_runs(store, fleet, host, &runs, experiment_id)?;
    outcome.run_ids.extend(&ids);
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_hosts_are_named_and_nothing_runs() {
        let (_held, port) = super::super::fleet_probe::closed_port();
        let fleet = ValidFleet {
            hosts: vec![FleetHost::parse(&format!("127.0.0.1:{port}")).unwrap()],
            job_text: "[w]\n".into(),
            job_name: "w".into(),
            job_file: None,
            target: "/tmp".into(),
            repeat: 1,
            label: "x".into(),
            timeout: Duration::from_secs(5),
            fio: "/bin/false".into(),
            warnings: Vec::new(),
        };
        let store = Store::open_in_memory().unwrap();
        let mut seen = Vec::new();
        let e = run_fleet(&store, &fleet, &mut |e| seen.push(e), &CancelToken::new()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(&format!("127.0.0.1:{port}")) && text.contains("refused"),
            "{text}"
        );
        assert!(e.is_usage());
        assert!(seen.is_empty());
        assert!(store.list_experiments().unwrap().is_empty());
    }
}
