//! The `isoterra` command line: create, edit, inspect and export world files.

mod args;
mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    if !matches!(cli.command, args::Command::Edit(_)) {
        end_quietly_on_a_closed_pipe();
    }
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Makes a write to a closed pipe (`isoterra bench noise | head -1`) end
/// the process quietly, as other command-line tools do, instead of a panic
/// in `println!`. Not for the editor's server, whose clients may close
/// their sockets at any time.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread starts;
    // it restores the default action of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
