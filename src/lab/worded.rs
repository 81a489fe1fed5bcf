//! Wording a library error for a front end: every error type that can name a setting
//! implements [`Worded`]; [`worded_error`] finds the one behind a `dyn Error` (an `anyhow`
//! chain link) so the CLI and the window word any library error with their own names.

use std::error::Error;

use super::LabError;
use crate::engine::{EngineError, IoFailure, TargetError};
use crate::report::OutputError;
use crate::scratch::ScratchError;
use crate::spec::{PresetError, SettingNames, SpecError, Worded};
use crate::store::StoreError;

impl Worded for LabError {
    fn worded(&self, names: &dyn SettingNames) -> String {
        match self {
            LabError::Engine(e) => engine_words(e, names),
            LabError::Store(e) => e.worded(names),
            LabError::Scratch(e) => e.worded(names),
            LabError::RawDevice(e) => e.worded(names),
            LabError::RunFailed { run_id, source } => {
                format!("run {run_id} failed: {}", engine_words(source, names))
            }
            LabError::NotStored { source, .. } => format!(
                "the run was measured but could not be stored: {}",
                source.worded(names)
            ),
            LabError::Export(e) => e.worded(names),
            LabError::Analysis(e) => e.worded(names),
            LabError::KernelTrace(e) => super::kernel::trace_error_words(e, names),
            LabError::Text(_) => self.to_string(),
            LabError::Bundle(crate::lab::bundle_import::BundleImportError::Bundle {
                path,
                source,
            }) => match &**source {
                crate::store::BundleError::Store(s) => {
                    format!("{}: {}", path.display(), s.worded(names))
                }
                _ => self.to_string(),
            },
            LabError::Bundle(_) => self.to_string(),
        }
    }

    fn explains_cause(&self) -> bool {
        match self {
            LabError::Engine(e) | LabError::RunFailed { source: e, .. } => engine_explains_cause(e),
            LabError::RawDevice(_) => true,
            _ => false,
        }
    }
}

/// The engine's error in words, its settings named by `names` (the failures it types are
/// worded by `words::failures`, as a stored run's are).
pub fn engine_words(e: &EngineError, names: &dyn SettingNames) -> String {
    match e {
        EngineError::Spec(e) => format!("invalid workload: {}", e.worded(names)),
        EngineError::Target(e) => crate::words::target::target_error_text(e, names),
        EngineError::Prepare(_)
        | EngineError::Open(_)
        | EngineError::Spawn { .. }
        | EngineError::Internal(_) => crate::report::run_failure_text(&e.failure(), names),
    }
}

/// Whether [`engine_words`] already says what the error's source means.
fn engine_explains_cause(e: &EngineError) -> bool {
    match e {
        EngineError::Target(_)
        | EngineError::Prepare(_)
        | EngineError::Open(_)
        | EngineError::Spawn { .. } => true,
        EngineError::Spec(_) | EngineError::Internal(_) => false,
    }
}

/// Whether `error` is a library error whose message already says what its source means
/// (see [`Worded::explains_cause`]): printing the chain stops after it.
pub fn explains_cause(error: &(dyn Error + 'static)) -> bool {
    if let Some(e) = error.downcast_ref::<LabError>() {
        e.explains_cause()
    } else if let Some(e) = error.downcast_ref::<EngineError>() {
        engine_explains_cause(e)
    } else {
        error.downcast_ref::<IoFailure>().is_some() || error.downcast_ref::<TargetError>().is_some()
    }
}

/// `error`'s message worded with `names` when it is a library error that can name a
/// setting, else its `Display`.
pub fn worded_error(error: &(dyn Error + 'static), names: &dyn SettingNames) -> String {
    if let Some(e) = error.downcast_ref::<LabError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<EngineError>() {
        engine_words(e, names)
    } else if let Some(e) = error.downcast_ref::<SpecError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<PresetError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<ScratchError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<StoreError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<super::export::ExportError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<crate::analysis::AnalysisError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<OutputError>() {
        e.worded(names)
    } else if let Some(e) = error.downcast_ref::<IoFailure>() {
        crate::report::io_failure_text(e, names)
    } else if let Some(e) = error.downcast_ref::<TargetError>() {
        crate::words::target::target_error_text(e, names)
    } else {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::FlatSpec;
    use crate::spec::Setting;

    struct Flags;
    impl SettingNames for Flags {
        fn name(&self, setting: Setting, value: Option<&str>) -> String {
            format!(
                "[{}{}]",
                setting.key(),
                value.map(|v| format!(" {v}")).unwrap_or_default()
            )
        }
    }

    #[test]
    fn a_wrapped_spec_error_is_worded_through_every_layer() {
        let spec = FlatSpec {
            block_size: 100,
            ..FlatSpec::default()
        }
        .typed();
        let e = LabError::Engine(EngineError::Spec(spec.validate().unwrap_err()));
        let neutral = e.to_string();
        assert!(
            neutral.ends_with("use e.g. 4k, 8k or 512 (block_size)"),
            "{neutral}"
        );
        let dyn_error: &(dyn Error + 'static) = &e;
        let worded = worded_error(dyn_error, &Flags);
        assert_eq!(
            worded,
            "invalid workload: block_size: 100 bytes is not a multiple of 512 between 512 and 64M; \
             use e.g. 4k, 8k or 512 ([block_size])"
        );
        let anyhow_error = anyhow::Error::new(e);
        assert_eq!(
            worded_error(anyhow_error.chain().next().unwrap(), &Flags),
            worded
        );
    }

    #[test]
    fn other_errors_keep_their_display() {
        let io = std::io::Error::other("boom");
        assert_eq!(worded_error(&io, &Flags), "boom");
    }
}
