//! fsynclab: no subcommand opens the lab window (when built with the `gui` feature, the
//! default); subcommands run headless.

fn main() -> std::process::ExitCode {
    // RUST_LOG chooses what is logged on stderr (`RUST_LOG=debug`, `RUST_LOG=eframe=info`);
    // without it, warnings and errors: eframe's, rfd's and the library's are never lost.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .format_timestamp(None)
        .init();
    let cli = fsynclab_cli::Cli::parse_args();
    fsynclab_cli::execute(cli, window())
}

/// The lab window, opened by the binary: the library never starts one itself.
#[cfg(feature = "gui")]
fn window() -> Option<fsynclab_cli::Window> {
    Some(|db| fsynclab_gui::launch(db).map_err(anyhow::Error::from))
}

/// A headless build has no window; `execute` says so and names the subcommands.
#[cfg(not(feature = "gui"))]
fn window() -> Option<fsynclab_cli::Window> {
    None
}
