//! Every fuzz target for a bounded number of inputs (CI): no reader may
//! panic on its seeds or on what the mutator makes of them. One test runs
//! them all in turn, because the fuzzer silences the process's panic hook.

use std::time::Duration;

#[test]
fn no_reader_panics_on_mutated_input() {
    let execs: u64 = std::env::var("ISOTERRA_FUZZ_EXECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let mut failures = Vec::new();
    for t in isoterra_fuzz::targets() {
        // The world-file target writes a file per input: fewer of those.
        let n = if t.name == "world-file" {
            execs / 10
        } else {
            execs
        };
        let seeds = (t.seeds)();
        assert!(!seeds.is_empty(), "{}: no seed input", t.name);
        let r = isoterra_fuzz::fuzz(&t, Duration::from_secs(60), n, 7);
        eprintln!(
            "{:16} {} execs in {:.2} s, {} panics",
            t.name,
            r.execs,
            r.elapsed.as_secs_f64(),
            r.panics.len()
        );
        for (input, why) in r.panics.iter().take(2) {
            failures.push(format!(
                "{}: {why} (input of {} bytes: {:?}…)",
                t.name,
                input.len(),
                &input[..input.len().min(48)]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "readers panicked:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_mutator_is_deterministic_and_changes_inputs() {
    let seeds = vec![b"hello, world".to_vec(), vec![0u8; 32]];
    let run = |s| {
        let mut rng = isoterra_fuzz::Rng::new(s);
        (0..50)
            .map(|_| isoterra_fuzz::mutate(&mut rng, &seeds))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
    let changed = run(3).iter().filter(|v| !seeds.contains(v)).count();
    assert!(changed > 40, "{changed} of 50 inputs differ from the seeds");
}

#[test]
fn png_crcs_are_mended_after_mutation() {
    // A real PNG keeps its bytes; a flipped byte inside a chunk gets the
    // chunk's CRC fixed, so the decoder reads past the checksum.
    let t = isoterra_fuzz::target("png16").unwrap();
    let png = (t.seeds)().remove(0);
    assert_eq!(isoterra_fuzz::png_with_crcs(&png), png);
    let mut bad = png.clone();
    bad[20] ^= 0x01; // inside IHDR's width field
    let fixed = isoterra_fuzz::png_with_crcs(&bad);
    assert_ne!(fixed[29..33], png[29..33], "IHDR's CRC follows its data");
    assert_eq!(fixed[..29], bad[..29]);
}
