//! Reading and writing NumPy `.npy` arrays as [`Field2`]s.
//!
//! An array of shape `(H, W)` becomes a field of `W x H` nodes: x is the
//! column (last axis), y the row, node `(x, y) = arr[y][x]`, cell size 1 and
//! origin `[0, 0]`. Coordinates are therefore sample indices, as the
//! command line documents for arrays.

use std::io::Read;
use std::path::Path;

use isoterra_field::{Field2, Field3, FieldError};

use crate::ExportError;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Nesting limit of the header parser (real headers nest at most twice).
const MAX_DEPTH: usize = 16;

/// Reads a `.npy` file into a field (see [`read_npy`]). The file is read a
/// block at a time straight into the field's values: the memory it takes is
/// the field's, not the file's bytes as well.
pub fn read_npy_file(path: impl AsRef<Path>) -> Result<Field2, ExportError> {
    let (file, len) = open(path.as_ref())?;
    read_npy_input(file_input(file, len))
}

/// Parses the bytes of a `.npy` file into a field.
///
/// Accepts format versions 1.0, 2.0 and 3.0, dtypes `<f4`, `<f8`, `>f4` and
/// `>f8`, C order, and a 2D shape `(rows, columns)`. Every value must be
/// finite (the error names the first bad one as `[row, col]`), and `f8`
/// values must fit in `f32`. Any other input gives a typed error, never a panic.
pub fn read_npy(bytes: &[u8]) -> Result<Field2, ExportError> {
    read_npy_from(bytes, Some(bytes.len() as u64))
}

/// Reads a 2D `.npy` array from a stream, as [`read_npy`] does from bytes.
///
/// `len` is the stream's length when it is known (a file's size): the data's
/// length is then checked before anything is allocated. Either way, no more
/// is read than the header announces plus what it takes to report trailing
/// bytes, and the values are decoded a block at a time into a buffer
/// allocated once at the field's size ([`ExportError::OutOfMemory`] when it
/// cannot be).
pub fn read_npy_from(r: impl Read, len: Option<u64>) -> Result<Field2, ExportError> {
    read_npy_input(Input::new(r, len))
}

fn read_npy_input(mut input: Input<impl Read>) -> Result<Field2, ExportError> {
    let header = input.header()?;
    if header.dtype_is_integer() {
        return Err(ExportError::NpyDtype(header.descr.clone()));
    }
    if header.dims.len() != 2 {
        return Err(ExportError::NpyShape(header.shape_text.clone()));
    }
    let (rows, cols) = (header.dims[0], header.dims[1]);
    // Size checks (zero, overflow, node cap) come before any allocation.
    let n = Field2::check_size(cols, rows)? as u64;
    let bad = |i: u64, value: f64, what| {
        let (row, col) = (i / cols, i % cols);
        if what == NOT_FINITE {
            ExportError::NpyNonFinite { row, col, value }
        } else {
            ExportError::NpyOutOfRange { row, col, value }
        }
    };
    let values = input.values(&header, n, &bad)?;
    Field2::from_values(cols as u32, rows as u32, values).map_err(|e| finite_or(e, &bad))
}

/// Reads a 3D `.npy` file into a [`Field3`] (see [`read_npy3`]), a block at
/// a time, as [`read_npy_file`] does.
pub fn read_npy3_file(path: impl AsRef<Path>) -> Result<Field3, ExportError> {
    let (file, len) = open(path.as_ref())?;
    read_npy3_input(file_input(file, len))
}

/// A file to read from, with a second handle for reads at an offset when
/// it is a regular file (of known length).
fn file_input(file: std::fs::File, len: Option<u64>) -> Input<std::fs::File> {
    let at = if len.is_some() {
        file.try_clone().ok()
    } else {
        None
    };
    Input {
        at,
        ..Input::new(file, len)
    }
}

/// Parses a 3D `.npy` array of shape `(Z, Y, X)` (C order, so x is the fastest
/// axis) into a field of `X x Y x Z` nodes: node `(x, y, z) = arr[z][y][x]`,
/// cell size 1, origin `[0, 0, 0]`, so coordinates are sample indices.
///
/// Dtypes: `f4` and `f8` (either byte order), `u1`, `i2` and `u2` (integers
/// become exact `f32` values). Every value must be finite (the error names the
/// first bad one as `[z, y, x]`) and `f8` values must fit in `f32`.
pub fn read_npy3(bytes: &[u8]) -> Result<Field3, ExportError> {
    read_npy3_from(bytes, Some(bytes.len() as u64))
}

/// Reads a 3D `.npy` array from a stream, as [`read_npy3`] does from bytes
/// (see [`read_npy_from`] for `len` and memory).
pub fn read_npy3_from(r: impl Read, len: Option<u64>) -> Result<Field3, ExportError> {
    read_npy3_input(Input::new(r, len))
}

fn read_npy3_input(mut input: Input<impl Read>) -> Result<Field3, ExportError> {
    let header = input.header()?;
    if header.dims.len() != 3 {
        return Err(ExportError::NpyShape3(header.shape_text.clone()));
    }
    let (d, h, w) = (header.dims[0], header.dims[1], header.dims[2]);
    let n = Field3::check_size(w, h, d)? as u64;
    let bad = |i: u64, value: f64, what| ExportError::NpyBadValue3 {
        index: [i / (w * h), i / w % h, i % w],
        value,
        what,
    };
    let values = input.values(&header, n, &bad)?;
    Field3::from_values(w as u32, h as u32, d as u32, values).map_err(|e| finite_or(e, &bad))
}

/// The field's error, or, for a value that is not finite (the check of
/// `f4` data, which the field's constructor makes), the reader's error that
/// names it by its place in the array.
fn finite_or(e: FieldError, bad: &impl Fn(u64, f64, &'static str) -> ExportError) -> ExportError {
    match e {
        FieldError::NonFinite { index, value } => bad(index as u64, f64::from(value), NOT_FINITE),
        e => e.into(),
    }
}

/// Opens a file to read, with its length when it is a regular file (a pipe
/// or a device has none).
fn open(path: &Path) -> Result<(std::fs::File, Option<u64>), ExportError> {
    let io = |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "a folder, not an input file",
        )));
    }
    Ok((file, meta.is_file().then_some(meta.len())))
}

/// Data from which a file's `f4` values are read by several threads.
#[cfg(all(feature = "parallel", unix))]
const PARALLEL_READ_BYTES: u64 = 16 << 20;

/// Reads `n` `f4` values at `offset` of `file` into `values` (empty, with
/// room for them), a block per task on the rayon pool: each thread copies
/// its blocks from the system's cache, which one thread alone does at a
/// fraction of the memory's speed.
#[cfg(all(feature = "parallel", unix))]
fn read_f4_at(
    file: &std::fs::File,
    offset: u64,
    little: bool,
    n: usize,
    values: &mut Vec<f32>,
    truncated: &(dyn Fn(u64) -> ExportError + Sync),
) -> Result<(), ExportError> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let per = BLOCK / 4;
    let room = &mut values.spare_capacity_mut()[..n];
    room.par_chunks_mut(per)
        .enumerate()
        .try_for_each(|(k, block)| {
            // SAFETY: zero bytes are a valid `f32`, so once written the
            // block may be seen as initialised values.
            let block = unsafe {
                std::ptr::write_bytes(block.as_mut_ptr(), 0, block.len());
                &mut *(block as *mut [std::mem::MaybeUninit<f32>] as *mut [f32])
            };
            let at = offset + (k * BLOCK) as u64;
            let bytes = f32_bytes_mut(block);
            let mut got = 0;
            while got < bytes.len() {
                match file.read_at(&mut bytes[got..], at + got as u64) {
                    Ok(0) => return Err(truncated(at + got as u64)),
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(ExportError::Read(e)),
                }
            }
            if little != cfg!(target_endian = "little") {
                for v in block {
                    *v = f32::from_bits(v.to_bits().swap_bytes());
                }
            }
            Ok(())
        })?;
    // SAFETY: every block of the first `n` slots was written above.
    unsafe { values.set_len(n) };
    Ok(())
}

/// Bytes decoded per block: a multiple of every dtype's size.
const BLOCK: usize = 1 << 20;
/// How far trailing bytes are counted on a stream of unknown length.
const TRAILING_COUNT_LIMIT: u64 = 1 << 20;

/// A `.npy` stream being read, with the count of bytes taken from it.
struct Input<R> {
    r: R,
    /// Bytes read so far.
    read: u64,
    /// The stream's whole length, when known.
    len: Option<u64>,
    /// The same file, for reads at an offset (a regular file of known
    /// length): large `f4` data is then read by the rayon pool's threads,
    /// each its own part.
    #[cfg_attr(not(all(feature = "parallel", unix)), allow(dead_code))]
    at: Option<std::fs::File>,
}

impl<R: Read> Input<R> {
    fn new(r: R, len: Option<u64>) -> Self {
        Input {
            r,
            read: 0,
            len,
            at: None,
        }
    }

    /// Fills `buf` as far as the stream goes; returns how many bytes came.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, ExportError> {
        let mut n = 0;
        while n < buf.len() {
            match self.r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ExportError::Read(e)),
            }
        }
        self.read += n as u64;
        Ok(n)
    }

    /// Reads exactly `buf.len()` bytes, or reports the `what` part truncated:
    /// it needs `needed` bytes from the start of the stream.
    fn exact(
        &mut self,
        buf: &mut [u8],
        what: &'static str,
        needed: u64,
    ) -> Result<(), ExportError> {
        if self.fill(buf)? < buf.len() {
            return Err(ExportError::NpyTruncated {
                what,
                needed,
                got: self.read,
            });
        }
        Ok(())
    }

    /// Reads the magic string, the version and the header dictionary.
    fn header(&mut self) -> Result<Header, ExportError> {
        let mut head = [0u8; 8];
        let got = self.fill(&mut head)?;
        let magic_len = got.min(MAGIC.len());
        if head[..magic_len] != MAGIC[..magic_len] {
            return Err(ExportError::NpyMagic);
        }
        if got < head.len() {
            return Err(ExportError::NpyTruncated {
                what: "header",
                needed: 10,
                got: got as u64,
            });
        }
        let (major, minor) = (head[6], head[7]);
        let (len_bytes, utf8) = match (major, minor) {
            (1, 0) => (2usize, false),
            (2, 0) => (4, false),
            (3, 0) => (4, true),
            _ => return Err(ExportError::NpyVersion { major, minor }),
        };
        let prefix = 8 + len_bytes as u64;
        let mut len = [0u8; 4];
        self.exact(&mut len[..len_bytes], "header", prefix)?;
        let header_len = if len_bytes == 2 {
            u16::from_le_bytes([len[0], len[1]]) as u64
        } else {
            u32::from_le_bytes(len) as u64
        };
        let data_start = prefix + header_len;
        if self.len.is_some_and(|total| total < data_start) {
            return Err(ExportError::NpyTruncated {
                what: "header",
                needed: data_start,
                got: self.len.unwrap_or(0),
            });
        }
        // Read in steps, so that a header length from a short stream
        // allocates no more than what arrives.
        let mut raw = Vec::new();
        let mut step = [0u8; 4096];
        while (raw.len() as u64) < header_len {
            let want = (header_len - raw.len() as u64).min(step.len() as u64) as usize;
            self.exact(&mut step[..want], "header", data_start)?;
            raw.extend_from_slice(&step[..want]);
        }
        let text = if utf8 {
            String::from_utf8(raw)
                .map_err(|_| ExportError::NpyHeader("the header is not valid UTF-8".into()))?
        } else {
            // Versions 1 and 2 use latin-1; anything outside ASCII is not part of
            // a valid header dictionary anyway.
            raw.iter().map(|&b| b as char).collect()
        };
        Header::parse(&text)
    }

    /// Reads the `n` values the header announces, then checks that nothing
    /// follows them. `bad(flat_index, value, what)` names the first value that
    /// is not finite or does not fit in `f32`; `f4` values are read as they
    /// are, and left to the field's constructor to check.
    fn values(
        &mut self,
        header: &Header,
        n: u64,
        bad: &impl Fn(u64, f64, &'static str) -> ExportError,
    ) -> Result<Vec<f32>, ExportError> {
        let size = header.dtype.size();
        // n is below every field's node cap (2^32), so this cannot overflow.
        let needed = n * size;
        if let Some(total) = self.len {
            let data = total.saturating_sub(self.read);
            if data < needed {
                return Err(ExportError::NpyTruncated {
                    what: "data",
                    needed,
                    got: data,
                });
            }
            if data > needed {
                return Err(ExportError::NpyTrailingBytes {
                    extra: data - needed,
                    more: false,
                });
            }
        }
        // The field's memory, new to the process: offered huge pages, so
        // that a large field takes a few hundred page faults, not one per
        // 4 KiB.
        let mut values = Vec::new();
        if !isoterra_field::huge_pages::try_reserve_exact(&mut values, n as usize) {
            return Err(ExportError::OutOfMemory {
                nodes: n,
                bytes: n * 4,
            });
        }
        let data_start = self.read;
        let truncated = |read: u64| ExportError::NpyTruncated {
            what: "data",
            needed,
            got: read - data_start,
        };
        #[cfg(all(feature = "parallel", unix))]
        if let (Dtype::F4 { little }, Some(file), Some(_)) = (header.dtype, &self.at, self.len)
            && needed >= PARALLEL_READ_BYTES
            && rayon::current_num_threads() > 1
        {
            read_f4_at(
                file,
                data_start,
                little,
                n as usize,
                &mut values,
                &truncated,
            )?;
            self.read += needed;
            // The length was checked against the header above: nothing
            // follows the data.
            return Ok(values);
        }
        if let Dtype::F4 { little } = header.dtype {
            // Read straight into the values, a block at a time: the file's
            // bytes are copied once, from the system's cache to the field.
            let n = n as usize;
            while values.len() < n {
                let start = values.len();
                values.resize(start + (n - start).min(BLOCK / 4), 0.0);
                let block = &mut values[start..];
                if self.fill(f32_bytes_mut(block))? < 4 * block.len() {
                    return Err(truncated(self.read));
                }
                if little != cfg!(target_endian = "little") {
                    for v in block {
                        *v = f32::from_bits(v.to_bits().swap_bytes());
                    }
                }
            }
        } else {
            let mut block = vec![0u8; BLOCK.min(needed as usize)];
            let mut done = 0u64;
            while done < needed {
                let want = (needed - done).min(BLOCK as u64) as usize;
                if self.fill(&mut block[..want])? < want {
                    return Err(truncated(self.read));
                }
                decode_block(header.dtype, &block[..want], done / size, &mut values, bad)?;
                done += want as u64;
            }
        }
        // Whatever follows the data is an error; on a stream of unknown
        // length it is counted up to a limit.
        let mut extra = 0u64;
        let mut more = false;
        let mut probe = [0u8; 4096];
        loop {
            let got = self.fill(&mut probe)? as u64;
            if got == 0 {
                break;
            }
            extra += got;
            if extra >= TRAILING_COUNT_LIMIT {
                more = true;
                break;
            }
        }
        if extra > 0 {
            return Err(ExportError::NpyTrailingBytes { extra, more });
        }
        Ok(values)
    }
}

/// Encodes a field as a version 1.0 `.npy` file of dtype `<f4` and shape
/// `(height, width)` (row `y` holds the nodes of row `y`).
pub fn export_npy_f32(field: &Field2) -> Vec<u8> {
    let mut dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}",
        field.height(),
        field.width()
    );
    // Pad with spaces so the data starts on a 64-byte boundary, ending in '\n'.
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len() + field.values().len() * 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    for v in field.values() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F4 { little: bool },
    F8 { little: bool },
    U1,
    I2 { little: bool },
    U2 { little: bool },
}

impl Dtype {
    fn size(self) -> u64 {
        match self {
            Dtype::F4 { .. } => 4,
            Dtype::F8 { .. } => 8,
            Dtype::U1 => 1,
            Dtype::I2 { .. } | Dtype::U2 { .. } => 2,
        }
    }

    fn parse(descr: &str) -> Option<Dtype> {
        Some(match descr {
            "<f4" => Dtype::F4 { little: true },
            ">f4" => Dtype::F4 { little: false },
            "<f8" => Dtype::F8 { little: true },
            ">f8" => Dtype::F8 { little: false },
            "|u1" | "<u1" | ">u1" => Dtype::U1,
            "<i2" => Dtype::I2 { little: true },
            ">i2" => Dtype::I2 { little: false },
            "<u2" => Dtype::U2 { little: true },
            ">u2" => Dtype::U2 { little: false },
            _ => return None,
        })
    }
}

#[derive(Debug)]
struct Header {
    dtype: Dtype,
    /// The shape, outermost axis first.
    dims: Vec<u64>,
    /// The shape as written, for error messages.
    shape_text: String,
    /// The dtype as written.
    descr: String,
}

/// A value of the Python literal subset used by `.npy` headers.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    None,
    Seq(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    fn describe(&self) -> String {
        match self {
            Lit::Str(s) => format!("'{s}'"),
            Lit::Bool(b) => if *b { "True" } else { "False" }.into(),
            Lit::Int(i) => i.to_string(),
            Lit::None => "None".into(),
            Lit::Seq(items) => {
                let inner: Vec<String> = items.iter().map(Lit::describe).collect();
                if items.len() == 1 {
                    format!("({},)", inner[0])
                } else {
                    format!("({})", inner.join(", "))
                }
            }
            Lit::Dict(_) => "{...}".into(),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

fn header_err(msg: impl Into<String>) -> ExportError {
    ExportError::NpyHeader(msg.into())
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), ExportError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(header_err(format!(
                "expected '{}' at byte {} of the header dictionary",
                c as char, self.pos
            )))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Lit, ExportError> {
        if depth > MAX_DEPTH {
            return Err(header_err("the header dictionary nests too deeply"));
        }
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.pos += 1;
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos] != q {
                    if self.s[self.pos] == b'\\' {
                        return Err(header_err(
                            "escape sequences are not supported in header strings",
                        ));
                    }
                    self.pos += 1;
                }
                if self.pos >= self.s.len() {
                    return Err(header_err("unterminated string in the header dictionary"));
                }
                let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                self.pos += 1;
                Ok(Lit::Str(text))
            }
            Some(b'0'..=b'9') => {
                let mut v: u64 = 0;
                while let Some(d @ b'0'..=b'9') = self.s.get(self.pos).copied() {
                    v = v
                        .checked_mul(10)
                        .and_then(|v| v.checked_add((d - b'0') as u64))
                        .ok_or_else(|| header_err("an integer in the header is too large"))?;
                    self.pos += 1;
                }
                // Python 2 wrote long integers with an `L` suffix.
                if self.s.get(self.pos) == Some(&b'L') {
                    self.pos += 1;
                }
                Ok(Lit::Int(v))
            }
            Some(open @ (b'(' | b'[')) => {
                let close = if open == b'(' { b')' } else { b']' };
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(c) if c == close => {}
                        _ => {
                            return Err(header_err(
                                "expected ',' or a closing bracket in a tuple or list",
                            ));
                        }
                    }
                }
                Ok(Lit::Seq(items))
            }
            Some(b'{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        break;
                    }
                    let k = self.value(depth + 1)?;
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    entries.push((k, v));
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => {
                            return Err(header_err("expected ',' or '}' in the header dictionary"));
                        }
                    }
                }
                Ok(Lit::Dict(entries))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphanumeric() {
                    self.pos += 1;
                }
                match &self.s[start..self.pos] {
                    b"True" => Ok(Lit::Bool(true)),
                    b"False" => Ok(Lit::Bool(false)),
                    b"None" => Ok(Lit::None),
                    word => Err(header_err(format!(
                        "unexpected word {:?} in the header dictionary",
                        String::from_utf8_lossy(word)
                    ))),
                }
            }
            Some(c) => Err(header_err(format!(
                "unexpected character {:?} at byte {} of the header dictionary",
                c as char, self.pos
            ))),
            None => Err(header_err("the header dictionary ends early")),
        }
    }
}

impl Header {
    fn parse(text: &str) -> Result<Header, ExportError> {
        let mut p = Parser {
            s: text.as_bytes(),
            pos: 0,
        };
        let Lit::Dict(entries) = p.value(0)? else {
            return Err(header_err("the header is not a dictionary"));
        };
        if p.peek().is_some() {
            return Err(header_err("unexpected bytes after the header dictionary"));
        }
        let get = |key: &str| {
            entries
                .iter()
                .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
                .map(|(_, v)| v)
                .ok_or_else(|| header_err(format!("the header has no '{key}' key")))
        };
        let descr = get("descr")?;
        let dtype = match descr {
            Lit::Str(s) => match Dtype::parse(s) {
                Some(d) => d,
                None => return Err(ExportError::NpyDtype(s.to_owned())),
            },
            other => return Err(ExportError::NpyDtype(other.describe())),
        };
        match get("fortran_order")? {
            Lit::Bool(false) => {}
            Lit::Bool(true) => return Err(ExportError::NpyFortranOrder),
            other => {
                return Err(header_err(format!(
                    "'fortran_order' must be True or False, not {}",
                    other.describe()
                )));
            }
        }
        let shape = get("shape")?;
        let dims: Vec<u64> = match shape {
            Lit::Seq(items) => items
                .iter()
                .map(|d| match d {
                    Lit::Int(v) => Ok(*v),
                    other => Err(header_err(format!(
                        "shape entries must be integers, not {}",
                        other.describe()
                    ))),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(header_err(format!(
                    "'shape' must be a tuple, not {}",
                    other.describe()
                )));
            }
        };
        Ok(Header {
            dtype,
            dims,
            shape_text: shape.describe(),
            descr: match descr {
                Lit::Str(s) => s.clone(),
                other => other.describe(),
            },
        })
    }
}

const NOT_FINITE: &str = "not finite";
const OUT_OF_RANGE: &str = "outside the f32 range";

impl Header {
    fn dtype_is_integer(&self) -> bool {
        matches!(self.dtype, Dtype::U1 | Dtype::I2 { .. } | Dtype::U2 { .. })
    }
}

/// The bytes of `values`, to read a native-order `f4` array into.
fn f32_bytes_mut(values: &mut [f32]) -> &mut [u8] {
    // SAFETY: the byte slice covers exactly the memory of `values` and
    // borrows it for as long; `f32` has no padding, `u8` no alignment, and
    // every bit pattern written through it is a valid `f32`.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    }
}

/// Converts one block of `dtype` values, the first of which has flat index
/// `first`, to `f32`, appending them to `values`; calls `bad(flat_index,
/// value, what)` for the first value that is not finite or does not fit in
/// `f32`.
fn decode_block(
    dtype: Dtype,
    data: &[u8],
    first: u64,
    values: &mut Vec<f32>,
    bad: &impl Fn(u64, f64, &'static str) -> ExportError,
) -> Result<(), ExportError> {
    let at = |i: usize| first + i as u64;
    match dtype {
        Dtype::F4 { .. } => unreachable!("f4 data is read in place, not decoded"),
        Dtype::F8 { little } => {
            for (i, c) in data.chunks_exact(8).enumerate() {
                let b = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
                let v = if little {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                };
                if !v.is_finite() {
                    return Err(bad(at(i), v, NOT_FINITE));
                }
                if v.abs() > f32::MAX as f64 {
                    return Err(bad(at(i), v, OUT_OF_RANGE));
                }
                values.push(v as f32);
            }
        }
        Dtype::U1 => values.extend(data.iter().map(|&b| b as f32)),
        Dtype::I2 { little } => values.extend(data.chunks_exact(2).map(|c| {
            let b = [c[0], c[1]];
            (if little {
                i16::from_le_bytes(b)
            } else {
                i16::from_be_bytes(b)
            }) as f32
        })),
        Dtype::U2 { little } => values.extend(data.chunks_exact(2).map(|c| {
            let b = [c[0], c[1]];
            (if little {
                u16::from_le_bytes(b)
            } else {
                u16::from_be_bytes(b)
            }) as f32
        })),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typical_headers() {
        let h =
            Header::parse("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }").unwrap();
        assert_eq!(h.dtype, Dtype::F8 { little: true });
        assert_eq!(h.dims, [3, 4]);
        let h = Header::parse("{\"shape\": (2L,5L), \"fortran_order\": False, \"descr\": \">f4\"}")
            .unwrap();
        assert_eq!(h.dtype, Dtype::F4 { little: false });
        assert_eq!(h.dims, [2, 5]);
    }

    #[test]
    fn header_errors_are_typed() {
        assert!(matches!(
            Header::parse("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4)}"),
            Err(ExportError::NpyDtype(_))
        ));
        assert!(matches!(
            Header::parse("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3, 4)}"),
            Err(ExportError::NpyDtype(_))
        ));
        assert!(matches!(
            Header::parse("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4)}"),
            Err(ExportError::NpyFortranOrder)
        ));
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (12,)}";
        let mut file = b"\x93NUMPY\x01\x00".to_vec();
        file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        file.extend_from_slice(dict.as_bytes());
        file.extend_from_slice(&[0; 48]);
        assert!(matches!(
            read_npy(&file),
            Err(ExportError::NpyShape(s)) if s == "(12,)"
        ));
        assert!(matches!(
            Header::parse("{'descr': '<f4', 'shape': (3, 4)}"),
            Err(ExportError::NpyHeader(_))
        ));
        assert!(matches!(
            Header::parse(&"(".repeat(100)),
            Err(ExportError::NpyHeader(_))
        ));
        assert!(matches!(
            Header::parse(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 4)}"
            ),
            Err(ExportError::NpyHeader(_))
        ));
    }
}
