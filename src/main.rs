//! fsynclab: no subcommand opens the lab window; subcommands run headless.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = fsynclab::cli::Cli::parse();
    fsynclab::cli::execute(cli)
}
