//! `isoterra-fuzz [TARGET|all] [--seconds N] [--seed S] [--out DIR]`: runs
//! fuzz targets for a while and saves the inputs that made a reader panic.

use std::path::PathBuf;
use std::time::Duration;

fn main() {
    let mut which = String::from("all");
    let mut seconds = 10.0f64;
    let mut seed = 1u64;
    let mut out = PathBuf::from("fuzz/findings");
    let mut args = std::env::args().skip(1);
    let usage = "usage: isoterra-fuzz [TARGET|all|list] [--seconds N] [--seed S] [--out DIR]";
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("error: {name} needs a value\n{usage}");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--seconds" => {
                seconds = value("--seconds")
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .unwrap_or_else(|| {
                        eprintln!("error: --seconds takes a positive number\n{usage}");
                        std::process::exit(2)
                    })
            }
            "--seed" => {
                seed = value("--seed").parse().unwrap_or_else(|_| {
                    eprintln!("error: --seed takes an integer\n{usage}");
                    std::process::exit(2)
                })
            }
            "--out" => out = value("--out").into(),
            "-h" | "--help" => {
                println!("{usage}");
                return;
            }
            other => which = other.to_string(),
        }
    }
    let targets = isoterra_fuzz::targets();
    if which == "list" {
        for t in &targets {
            println!("{:16} {}", t.name, t.what);
        }
        return;
    }
    let chosen: Vec<_> = targets
        .iter()
        .filter(|t| which == "all" || t.name == which)
        .collect();
    if chosen.is_empty() {
        let names: Vec<_> = targets.iter().map(|t| t.name).collect();
        eprintln!("error: no target `{which}`; targets: {}", names.join(", "));
        std::process::exit(2);
    }
    let mut found = 0;
    for t in chosen {
        let r = isoterra_fuzz::fuzz(t, Duration::from_secs_f64(seconds), u64::MAX, seed);
        let rate = r.execs as f64 / r.elapsed.as_secs_f64().max(1e-9);
        println!(
            "{:16} {:>10} execs in {:>6.1} s ({:>9.0}/s), {} panics",
            t.name,
            r.execs,
            r.elapsed.as_secs_f64(),
            rate,
            r.panics.len()
        );
        for (k, (input, why)) in r.panics.iter().enumerate() {
            found += 1;
            let _ = std::fs::create_dir_all(&out);
            let path = out.join(format!("{}-{seed}-{k}.bin", t.name));
            let _ = std::fs::write(&path, input);
            println!("  panic: {why}\n  input saved to {}", path.display());
        }
    }
    if found > 0 {
        std::process::exit(1);
    }
}
