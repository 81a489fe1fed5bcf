//! The words of why io_uring cannot be used here (issue 32): the engine's probe hands over
//! an [`UringUnavailable`] as data and the front ends word it here.

use crate::uring::UringUnavailable;

/// What the kernel says, in words.
pub fn uring_unavailable_text(why: &UringUnavailable) -> String {
    match (why.errno, why.io_uring_disabled) {
        (Some(libc::ENOSYS), _) => {
            "the kernel has no io_uring (ENOSYS: too old, or built without CONFIG_IO_URING)".into()
        }
        (Some(libc::EPERM), Some(2)) => {
            "io_uring is disabled on this machine (kernel.io_uring_disabled = 2)".into()
        }
        (Some(libc::EPERM), Some(1)) => "io_uring is limited to the io_uring_group by \
             kernel.io_uring_disabled = 1 and this user is not in it"
            .into(),
        (Some(libc::EPERM), _) => {
            "io_uring is not permitted here (EPERM: a seccomp filter or a container policy)".into()
        }
        (errno, _) => format!(
            "io_uring could not be set up: {}",
            crate::metrics::os_error_text(errno)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailable_reasons_name_the_cause() {
        let why = |errno, disabled| UringUnavailable {
            errno: Some(errno),
            io_uring_disabled: disabled,
        };
        let enosys = uring_unavailable_text(&why(libc::ENOSYS, None));
        assert!(enosys.contains("ENOSYS"), "{enosys}");
        assert!(uring_unavailable_text(&why(libc::EPERM, Some(2))).contains("= 2"));
        let other = uring_unavailable_text(&why(libc::ENOMEM, Some(0)));
        assert!(other.contains("could not be set up"), "{other}");
    }
}
