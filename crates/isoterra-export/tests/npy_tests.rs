//! `.npy` reading and writing: round trips, every supported variant, and
//! typed errors (never a panic) for everything else.

use isoterra_export::{ExportError, export_npy_f32, read_npy, read_npy_file};
use isoterra_field::{Field2, FieldError};
use proptest::prelude::*;

/// Builds a `.npy` file by hand: `version` 1, 2 or 3, a header dictionary and
/// raw data bytes.
fn npy(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.to_owned();
    let prefix = if version == 1 { 10 } else { 12 };
    let total = prefix + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn dict(descr: &str, rows: usize, cols: usize) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}")
}

fn f8_le(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn round_trip_is_exact() {
    let field = Field2::from_fn(5, 3, |x, y| x as f32 * 0.25 - y as f32 * 1.5 + 0.1).unwrap();
    let bytes = export_npy_f32(&field);
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    // The data starts on a 64-byte boundary and the header ends in a newline.
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0);
    assert_eq!(bytes[10 + header_len - 1], b'\n');
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(
        header.contains("'descr': '<f4'") && header.contains("'shape': (3, 5)"),
        "{header}"
    );
    let back = read_npy(&bytes).unwrap();
    assert_eq!(back, field);
}

#[test]
fn axes_map_rows_to_y_and_columns_to_x() {
    // arr = [[0, 1, 2], [10, 11, 12]]: shape (2, 3) -> 3 x 2 nodes, node (x, y) = arr[y][x].
    let data = f8_le(&[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
    let f = read_npy(&npy(1, &dict("<f8", 2, 3), &data)).unwrap();
    assert_eq!((f.width(), f.height()), (3, 2));
    assert_eq!(f.get(2, 0), 2.0);
    assert_eq!(f.get(0, 1), 10.0);
    assert_eq!(f.get(2, 1), 12.0);
    assert_eq!(f.cell_size(), 1.0);
    assert_eq!(f.origin(), [0.0, 0.0]);
}

#[test]
fn every_dtype_and_version_reads() {
    let values = [1.5f32, -2.25, 3.0, 0.125];
    let expect = Field2::from_values(2, 2, values.to_vec()).unwrap();
    let le4: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let be4: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let le8: Vec<u8> = values
        .iter()
        .flat_map(|&v| (v as f64).to_le_bytes())
        .collect();
    let be8: Vec<u8> = values
        .iter()
        .flat_map(|&v| (v as f64).to_be_bytes())
        .collect();
    for version in [1, 2, 3] {
        for (descr, data) in [("<f4", &le4), (">f4", &be4), ("<f8", &le8), (">f8", &be8)] {
            let f = read_npy(&npy(version, &dict(descr, 2, 2), data))
                .unwrap_or_else(|e| panic!("v{version} {descr}: {e}"));
            assert_eq!(f, expect, "v{version} {descr}");
        }
    }
    // Key order, quotes, spacing and Python 2 long suffixes vary between writers.
    let alt = "{\"shape\":(2L,2L),\"fortran_order\":False,\"descr\":\"<f4\"}";
    assert_eq!(read_npy(&npy(1, alt, &le4)).unwrap(), expect);
    // Version 3 allows UTF-8 in the header.
    let utf = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'note': 'é'}";
    assert_eq!(read_npy(&npy(3, utf, &le4)).unwrap(), expect);
}

#[test]
fn non_finite_values_name_their_row_and_column() {
    let mut values = vec![0.0f64; 12];
    values[7] = f64::NAN; // shape (3, 4): index 7 is row 1, column 3
    let err = read_npy(&npy(1, &dict("<f8", 3, 4), &f8_le(&values))).unwrap_err();
    match &err {
        ExportError::NpyNonFinite { row, col, value } => {
            assert_eq!((*row, *col), (1, 3));
            assert!(value.is_nan());
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("[1, 3]"), "{err}");

    let mut values = [0.0f32; 6];
    values[4] = f32::NEG_INFINITY;
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    match read_npy(&npy(1, &dict("<f4", 2, 3), &data)) {
        Err(ExportError::NpyNonFinite { row: 1, col: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn f8_values_outside_f32_are_rejected() {
    let mut values = vec![0.0f64; 4];
    values[2] = 1e300;
    match read_npy(&npy(1, &dict("<f8", 2, 2), &f8_le(&values))) {
        Err(ExportError::NpyOutOfRange {
            row: 1,
            col: 0,
            value,
        }) => assert_eq!(value, 1e300),
        other => panic!("{other:?}"),
    }
    // The largest f32 itself is fine, and tiny values round to zero.
    let ok = f8_le(&[f32::MAX as f64, -(f32::MAX as f64), 1e-300, 0.0]);
    let f = read_npy(&npy(1, &dict("<f8", 2, 2), &ok)).unwrap();
    assert_eq!(f.values(), &[f32::MAX, -f32::MAX, 0.0, 0.0]);
}

#[test]
fn unsupported_layouts_get_clear_errors() {
    let data = f8_le(&[0.0; 4]);
    let fortran = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }";
    let err = read_npy(&npy(1, fortran, &data)).unwrap_err();
    assert!(matches!(err, ExportError::NpyFortranOrder));
    assert!(err.to_string().contains("Fortran"));

    for descr in ["<i4", "<f2", "|u1", "<c8", "|b1", "<U4"] {
        match read_npy(&npy(1, &dict(descr, 2, 2), &data)) {
            Err(ExportError::NpyDtype(d)) => assert_eq!(d, descr),
            other => panic!("{descr}: {other:?}"),
        }
    }
    for shape in ["(4,)", "(1, 2, 2)", "()"] {
        let d = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
        match read_npy(&npy(1, &d, &data)) {
            Err(ExportError::NpyShape(s)) => assert_eq!(s, shape),
            other => panic!("{shape}: {other:?}"),
        }
    }
    // Too small for a field (one row) and zero-sized arrays.
    assert!(matches!(
        read_npy(&npy(1, &dict("<f8", 1, 4), &data)),
        Err(ExportError::Field(FieldError::InvalidSize { .. }))
    ));
    assert!(matches!(
        read_npy(&npy(1, &dict("<f8", 0, 4), &[])),
        Err(ExportError::Field(FieldError::InvalidSize { .. }))
    ));
    // A huge shape is refused before any allocation.
    assert!(matches!(
        read_npy(&npy(1, &dict("<f4", 100_000, 100_000), &[])),
        Err(ExportError::Field(FieldError::TooLarge { .. }))
    ));
    assert!(matches!(
        read_npy(&npy(1, &dict("<f4", usize::MAX, usize::MAX), &[])),
        Err(ExportError::Field(FieldError::TooLarge { .. }))
    ));
}

#[test]
fn corrupt_files_get_clear_errors() {
    let good = export_npy_f32(&Field2::new(3, 3, 0.5).unwrap());
    assert!(matches!(
        read_npy(b""),
        Err(ExportError::NpyTruncated { .. })
    ));
    assert!(matches!(
        read_npy(b"\x93NUM"),
        Err(ExportError::NpyTruncated { .. })
    ));
    assert!(matches!(
        read_npy(b"PK\x03\x04 a zip file"),
        Err(ExportError::NpyMagic)
    ));
    assert!(matches!(
        read_npy(b"hello world, not npy"),
        Err(ExportError::NpyMagic)
    ));

    let mut v4 = good.clone();
    v4[6] = 4;
    assert!(matches!(
        read_npy(&v4),
        Err(ExportError::NpyVersion { major: 4, minor: 0 })
    ));
    let mut v11 = good.clone();
    v11[7] = 1;
    assert!(matches!(
        read_npy(&v11),
        Err(ExportError::NpyVersion { major: 1, minor: 1 })
    ));

    // Cut inside the header, inside the data, or with bytes to spare.
    match read_npy(&good[..40]) {
        Err(ExportError::NpyTruncated { what: "header", .. }) => {}
        other => panic!("{other:?}"),
    }
    match read_npy(&good[..good.len() - 3]) {
        Err(ExportError::NpyTruncated {
            what: "data",
            needed: 36,
            got: 33,
        }) => {}
        other => panic!("{other:?}"),
    }
    let mut long = good.clone();
    long.extend_from_slice(&[0, 0, 0, 0]);
    assert!(matches!(
        read_npy(&long),
        Err(ExportError::NpyTrailingBytes {
            extra: 4,
            more: false
        })
    ));

    // Malformed header dictionaries.
    for bad in [
        "{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3)",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (3, 3)}",
        "['descr', '<f4']",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 3)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': 9}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 'x')}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 3)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3)} trailing",
        "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3, 3)}",
    ] {
        let bytes = npy(1, bad, &[0u8; 36]);
        match read_npy(&bytes) {
            Err(ExportError::NpyHeader(msg)) => assert!(!msg.is_empty()),
            other => panic!("{bad}: {other:?}"),
        }
    }
    // Invalid UTF-8 in a version 3 header.
    let mut v3 = npy(3, &dict("<f4", 3, 3), &[0u8; 36]);
    v3[20] = 0xFF;
    assert!(matches!(read_npy(&v3), Err(ExportError::NpyHeader(_))));
}

#[test]
fn files_are_read_and_missing_files_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("terrain.npy");
    let field = Field2::from_fn(4, 6, |x, y| (x * y) as f32).unwrap();
    std::fs::write(&path, export_npy_f32(&field)).unwrap();
    assert_eq!(read_npy_file(&path).unwrap(), field);
    let missing = dir.path().join("nope.npy");
    let err = read_npy_file(&missing).unwrap_err();
    assert!(matches!(err, ExportError::Io { .. }));
    assert!(err.to_string().contains("nope.npy"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_fields_round_trip(
        w in 2u32..20,
        h in 2u32..20,
        seed in any::<u64>(),
    ) {
        let field = Field2::from_fn(w, h, |x, y| {
            let k = seed.wrapping_add(((y * w + x) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            f32::from_bits((k >> 32) as u32 & 0x7F7F_FFFF | ((k as u32) & 0x8000_0000))
        }).unwrap();
        let back = read_npy(&export_npy_f32(&field)).unwrap();
        prop_assert_eq!(
            back.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            field.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = read_npy(&bytes);
        // Random bytes behind a real magic and version reach the header parser.
        let mut with_magic = b"\x93NUMPY\x01\x00".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = read_npy(&with_magic);
    }

    #[test]
    fn random_headers_never_panic(header in "[ -~]{0,120}", data in prop::collection::vec(any::<u8>(), 0..64)) {
        for version in [1, 2, 3] {
            let _ = read_npy(&npy(version, &header, &data));
        }
    }

    #[test]
    fn truncated_and_corrupted_files_are_errors_not_panics(
        w in 2u32..9,
        h in 2u32..9,
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let good = export_npy_f32(&Field2::new(w, h, 0.25).unwrap());
        let n = cut.index(good.len());
        prop_assert!(read_npy(&good[..n]).is_err());
        let mut bad = good.clone();
        let i = flip.index(bad.len());
        bad[i] = byte;
        // Either still a valid file (a data byte changed) or a typed error.
        match read_npy(&bad) {
            Ok(f) => prop_assert_eq!((f.width(), f.height()), (w, h)),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Builds a version 1.0 `.npy` file with the given dtype, shape and raw data.
fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}").into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

#[test]
fn three_d_arrays_put_x_on_the_last_axis() {
    // shape (Z, Y, X) = (2, 3, 4); value = 100 z + 10 y + x.
    let mut data = Vec::new();
    for z in 0..2 {
        for y in 0..3 {
            for x in 0..4 {
                data.extend_from_slice(&((100 * z + 10 * y + x) as f32).to_le_bytes());
            }
        }
    }
    let f = isoterra_export::read_npy3(&npy_bytes("<f4", "(2, 3, 4)", &data)).unwrap();
    assert_eq!(f.dims(), [4, 3, 2]);
    assert_eq!(f.get(3, 2, 1), 123.0);
    assert_eq!(f.get(1, 0, 1), 101.0);
}

#[test]
fn three_d_integer_dtypes_are_exact() {
    let n = 2 * 2 * 2;
    let u1: Vec<u8> = (0..n).map(|i| (i * 30) as u8).collect();
    let f = isoterra_export::read_npy3(&npy_bytes("|u1", "(2, 2, 2)", &u1)).unwrap();
    assert_eq!(f.values()[7], 210.0);
    let i2: Vec<u8> = (0..n)
        .flat_map(|i| (-1000 * i as i16).to_le_bytes())
        .collect();
    let f = isoterra_export::read_npy3(&npy_bytes("<i2", "(2, 2, 2)", &i2)).unwrap();
    assert_eq!(f.values()[7], -7000.0);
    let u2: Vec<u8> = (0..n)
        .flat_map(|i| (9000 * i as u16).to_be_bytes())
        .collect();
    let f = isoterra_export::read_npy3(&npy_bytes(">u2", "(2, 2, 2)", &u2)).unwrap();
    assert_eq!(f.values()[7], 63000.0);
    let f8: Vec<u8> = (0..n)
        .flat_map(|i| (i as f64 * 0.5).to_le_bytes())
        .collect();
    let f = isoterra_export::read_npy3(&npy_bytes("<f8", "(2, 2, 2)", &f8)).unwrap();
    assert_eq!(f.values()[7], 3.5);
}

#[test]
fn three_d_errors_name_the_index_and_the_shape() {
    let mut data: Vec<u8> = (0..24).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    let bad = (4 * 3 + 2 * 4 + 1) * 4; // [z=1, y=2, x=1]
    data[bad..bad + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let err = isoterra_export::read_npy3(&npy_bytes("<f4", "(2, 3, 4)", &data)).unwrap_err();
    match &err {
        ExportError::NpyBadValue3 { index, .. } => assert_eq!(*index, [1, 2, 1]),
        other => panic!("expected NpyBadValue3, got {other:?}"),
    }
    assert!(err.to_string().contains("[1, 2, 1]"), "{err}");
    let err = isoterra_export::read_npy3(&npy_bytes("<f4", "(6, 4)", &data)).unwrap_err();
    assert!(matches!(err, ExportError::NpyShape3(_)), "{err:?}");
    let err = isoterra_export::read_npy3(&npy_bytes("<i4", "(2, 3, 4)", &data)).unwrap_err();
    assert!(matches!(err, ExportError::NpyDtype(_)), "{err:?}");
    let err = isoterra_export::read_npy3(&npy_bytes("<f4", "(2, 3, 4)", &data[..50])).unwrap_err();
    assert!(matches!(err, ExportError::NpyTruncated { .. }), "{err:?}");
    // Integer dtypes are for 3D volumes only; a 2D field asks for floats.
    let err = isoterra_export::read_npy(&npy_bytes("|u1", "(2, 3)", &[0; 6])).unwrap_err();
    assert!(matches!(err, ExportError::NpyDtype(_)), "{err:?}");
}

/// A reader that hands out at most `step` bytes per call (as a pipe does),
/// with no length known up front.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn trickle(bytes: &[u8], step: usize) -> Trickle<'_> {
    Trickle { bytes, step }
}

/// An array of every dtype, 2D or 3D, of random size, as `.npy` bytes.
fn any_npy() -> impl Strategy<Value = (Vec<u8>, bool)> {
    (
        prop::sample::select(vec!["<f4", ">f4", "<f8", ">f8", "|u1", "<i2", ">u2"]),
        2usize..7,
        2usize..7,
        2usize..5,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(descr, a, b, c, three, seed)| {
            let n = if three { a * b * c } else { a * b };
            let shape = if three {
                format!("({c}, {b}, {a})")
            } else {
                format!("({b}, {a})")
            };
            let size = match descr {
                "<f8" | ">f8" => 8,
                "|u1" => 1,
                "<i2" | ">u2" => 2,
                _ => 4,
            };
            let data: Vec<u8> = (0..n * size)
                .map(|i| {
                    let k = seed
                        .wrapping_add(i as u64)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    // Exponent bytes stay small, so most floats are finite.
                    if size >= 4 && (i % size == 0 || i % size == size - 1) {
                        (k >> 60) as u8
                    } else {
                        (k >> 56) as u8
                    }
                })
                .collect();
            (npy_bytes(descr, &shape, &data), three)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Reading a stream a few bytes at a time, with or without its length,
    /// gives what reading the bytes gives: the same field, or an error.
    #[test]
    fn streams_read_as_bytes_do(
        (bytes, three) in any_npy(),
        step in 1usize..300,
        cut in any::<prop::sample::Index>(),
        whole in any::<bool>(),
    ) {
        let bytes = if whole { bytes.clone() } else { bytes[..cut.index(bytes.len())].to_vec() };
        for len in [None, Some(bytes.len() as u64)] {
            if three {
                let want = isoterra_export::read_npy3(&bytes);
                let got = isoterra_export::read_npy3_from(trickle(&bytes, step), len);
                match (want, got) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                    (Err(_), Err(_)) => {}
                    (a, b) => prop_assert!(false, "bytes {a:?}, stream {b:?}"),
                }
            } else {
                let want = read_npy(&bytes);
                let got = isoterra_export::read_npy_from(trickle(&bytes, step), len);
                match (want, got) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                    (Err(_), Err(_)) => {}
                    (a, b) => prop_assert!(false, "bytes {a:?}, stream {b:?}"),
                }
            }
        }
    }
}

#[test]
fn streams_of_unknown_length_report_what_they_hold() {
    let data: Vec<u8> = (0..24).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let good = npy_bytes("<f4", "(2, 3, 4)", &data);
    let f = isoterra_export::read_npy3_from(trickle(&good, 5), None).unwrap();
    assert_eq!((f.dims(), f.values()[23]), ([4, 3, 2], 23.0));
    // Cut short: the data present is counted.
    let cut = &good[..good.len() - 10];
    match isoterra_export::read_npy3_from(trickle(cut, 7), None) {
        Err(ExportError::NpyTruncated {
            what: "data",
            needed: 96,
            got: 86,
        }) => {}
        other => panic!("expected a truncated data error, got {other:?}"),
    }
    // A few trailing bytes are counted exactly ...
    let mut long = good.clone();
    long.extend_from_slice(&[0; 5]);
    match isoterra_export::read_npy3_from(trickle(&long, 3), None) {
        Err(ExportError::NpyTrailingBytes {
            extra: 5,
            more: false,
        }) => {}
        other => panic!("expected 5 trailing bytes, got {other:?}"),
    }
    // ... and an endless tail is counted up to a limit, then reported.
    let endless = std::io::Read::chain(&good[..], std::io::repeat(0));
    let err = isoterra_export::read_npy3_from(endless, None).unwrap_err();
    assert!(
        matches!(err, ExportError::NpyTrailingBytes { more: true, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("more than"), "{err}");
    // A header that announces 4 GiB of dictionary on a short stream is
    // truncated, not allocated.
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    huge.extend_from_slice(b"{'descr': '<f4'");
    match isoterra_export::read_npy3_from(trickle(&huge, 64), None) {
        Err(ExportError::NpyTruncated { what: "header", .. }) => {}
        other => panic!("expected a truncated header, got {other:?}"),
    }
    // An endless stream of zeros is not an array.
    let err = isoterra_export::read_npy3_from(std::io::repeat(0), None).unwrap_err();
    assert!(matches!(err, ExportError::NpyMagic), "{err:?}");
}

/// Volumes above the old 2^28-node cap are taken (the header is checked,
/// nothing of that size is allocated here); past 2^30 nodes the error names
/// the three axes.
#[test]
fn large_volumes_are_checked_against_the_3d_cap() {
    // 700^3 nodes announced, no data: the size passes, the data is missing.
    let err = isoterra_export::read_npy3(&npy_bytes("<f4", "(700, 700, 700)", &[])).unwrap_err();
    match err {
        ExportError::NpyTruncated {
            what: "data",
            needed,
            got: 0,
        } => assert_eq!(needed, 700 * 700 * 700 * 4),
        other => panic!("expected a truncated data error, got {other:?}"),
    }
    let err = isoterra_export::read_npy3(&npy_bytes("<f4", "(2048, 1024, 1024)", &[])).unwrap_err();
    assert!(
        matches!(
            err,
            ExportError::Field(FieldError::TooLarge {
                width: 1024,
                height: 1024,
                depth: 2048,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("1024x1024x2048 nodes"), "{err}");
}

/// Volumes of several read blocks (`f4` is read a megabyte at a time, in
/// place): values in either byte order land where they belong, a bad value
/// in a later block is named by its index, and a file cut inside a later
/// block is reported as truncated, from a file's bytes and from a stream
/// that hands over a few bytes at a time.
#[test]
fn f4_volumes_of_several_blocks_read_in_place() {
    let (w, h, d) = (67usize, 61, 71); // 290,177 values: more than one block
    let n = w * h * d;
    let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
    let shape = format!("({d}, {h}, {w})");
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    for (descr, data) in [("<f4", &le), (">f4", &be)] {
        let bytes = npy_bytes(descr, &shape, data);
        let f = isoterra_export::read_npy3(&bytes).unwrap();
        assert_eq!(f.values(), &values[..], "{descr}");
        let streamed = isoterra_export::read_npy3_from(trickle(&bytes, 4093), None).unwrap();
        assert_eq!(streamed.values(), &values[..], "{descr} streamed");
    }

    // A NaN far into the second block: [z, y, x] of flat index `at`.
    let at = 280_001;
    let mut bad = le.clone();
    bad[4 * at..4 * at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    match isoterra_export::read_npy3(&npy_bytes("<f4", &shape, &bad)) {
        Err(ExportError::NpyBadValue3 { index, value, .. }) => {
            assert_eq!(
                index,
                [(at / (w * h)) as u64, (at / w % h) as u64, (at % w) as u64]
            );
            assert!(value.is_nan());
        }
        other => panic!("expected NpyBadValue3, got {other:?}"),
    }

    // Cut inside the second block: the file's length says so up front; a
    // stream of unknown length runs dry while its block is read.
    let cut = npy_bytes("<f4", &shape, &le[..4 * 270_000 + 2]);
    for got in [
        isoterra_export::read_npy3(&cut),
        isoterra_export::read_npy3_from(trickle(&cut, 1000), None),
    ] {
        match got {
            Err(ExportError::NpyTruncated { what, needed, got }) => {
                assert_eq!(what, "data");
                assert_eq!(needed, 4 * n as u64);
                assert_eq!(got, 4 * 270_000 + 2);
            }
            other => panic!("expected NpyTruncated, got {other:?}"),
        }
    }
}

/// Files of more than 16 MiB of `f4` data are read by the pool's threads,
/// each its blocks, at their offsets: the same values as one stream, either
/// byte order, in 2D and 3D, and a bad value is still named by its place.
#[test]
fn large_f4_files_read_on_threads_as_one_stream() {
    let dir = tempfile::tempdir().unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let (w, h, d) = (301usize, 157, 97); // 4.58 M values, 18.3 MB: several blocks each
    let n = w * h * d;
    let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let path = dir.path().join("v.npy");
    for (descr, data) in [("<f4", &le), (">f4", &be)] {
        let bytes = npy_bytes(descr, &format!("({d}, {h}, {w})"), data);
        std::fs::write(&path, &bytes).unwrap();
        let f = pool
            .install(|| isoterra_export::read_npy3_file(&path))
            .unwrap();
        assert!(f.values() == &values[..], "{descr} 3D");
        assert_eq!(f.dims(), [w as u32, h as u32, d as u32]);
        let bytes = npy_bytes(descr, &format!("({}, {w})", h * d), data);
        std::fs::write(&path, &bytes).unwrap();
        let f = pool.install(|| read_npy_file(&path)).unwrap();
        assert!(f.values() == &values[..], "{descr} 2D");
        assert_eq!((f.width(), f.height()), (w as u32, (h * d) as u32));
    }
    // An infinity in the last block: [row, col] of flat index `at`.
    let at = n - 5;
    let mut bad = le.clone();
    bad[4 * at..4 * at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(&path, npy_bytes("<f4", &format!("({}, {w})", h * d), &bad)).unwrap();
    match pool.install(|| read_npy_file(&path)) {
        Err(ExportError::NpyNonFinite { row, col, value }) => {
            assert_eq!((row, col), ((at / w) as u64, (at % w) as u64));
            assert!(value.is_infinite());
        }
        other => panic!("expected NpyNonFinite, got {other:?}"),
    }
    // A file cut short: its length says so before anything is read.
    let cut = npy_bytes("<f4", &format!("({}, {w})", h * d), &le[..le.len() - 6]);
    std::fs::write(&path, &cut).unwrap();
    match pool.install(|| read_npy_file(&path)) {
        Err(ExportError::NpyTruncated { what, .. }) => assert_eq!(what, "data"),
        other => panic!("expected NpyTruncated, got {other:?}"),
    }
}
