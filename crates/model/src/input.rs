//! An input file's text and its document tree: the error every input file reports, the two
//! formats, the bounded read of a file the user named, and the strict parse into one generic
//! tree that the validators walk (task-set files, overhead profiles).

use serde_json::Value;
use std::fmt;
use std::path::Path;

/// A problem with user input. Displayed as `FILE: task 'NAME' (tasks[i]): field 'F': message`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    pub file: String,
    /// e.g. `task 't1' (tasks[1])`, `run`, `platform`.
    pub context: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: &str, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            context: None,
            field: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(c) = &self.context {
            write!(f, ": {c}")?;
        }
        if let Some(fl) = &self.field {
            write!(f, ": field '{fl}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    pub fn from_path(path: &str) -> Format {
        let p = path.to_ascii_lowercase();
        if p.ends_with(".json") {
            Format::Json
        } else {
            Format::Yaml
        }
    }
}

/// The text of an input file the user named: a regular file of at most `max` bytes, or a FIFO
/// (read up to `max`); anything else (a directory, a device such as /dev/zero, a socket) is
/// refused before it is read, so no input takes unbounded time or memory. `what` names the
/// kind of file in the message.
pub fn read_input_text(path: &Path, max: u64, what: &str) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path)?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    if !ft.is_file() && !ft.is_fifo() {
        let kind = if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::other(format!("is {kind}, not {what}")));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than {what}'s limit of {max} bytes",
            meta.len()
        )));
    }
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "more than {what}'s limit of {max} bytes"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Read YAML or JSON text strictly ([`crate::strict`]): malformed text is reported at its
/// position; a duplicate key, NaN, infinity or negative zero by the field that holds it (a
/// task's by its name, as the validators do).
pub(crate) fn read_document(text: &str, format: Format, source: &str) -> Result<Value, InputError> {
    use crate::strict::{self, ReadError, Seg};
    // A byte-order mark (editors on Windows write one) starts the text, not a document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let what = match format {
        Format::Json => "JSON",
        Format::Yaml => "YAML",
    };
    let read = match format {
        Format::Json => strict::from_json(text),
        Format::Yaml => strict::from_yaml(text),
    };
    match read {
        Ok(v) => Ok(v),
        Err(ReadError::Malformed { line: Some(l), column: Some(c), message }) => {
            // JSON has no NaN or infinity literals; say so rather than "expected value".
            let at = text.lines().nth(l - 1).and_then(|t| t.get(c.saturating_sub(1)..)).unwrap_or("");
            let special = ["NaN", "Infinity", "-Infinity"].into_iter().find(|w| at.starts_with(w));
            let msg = match special {
                Some(w) => format!("{w} is not a value rtsched accepts (JSON has no {w}; write a number)"),
                None => format!("malformed {what}: {}", strip_pos(&message)),
            };
            Err(InputError::new(source, format!("line {l} column {c}: {msg}")))
        }
        Err(ReadError::Malformed { message, .. }) => Err(InputError::new(source, format!("malformed {what}: {message}"))),
        Err(ReadError::Inexact { line, column, written, read }) => Err(InputError::new(
            source,
            format!(
                "line {line} column {column}: the number {written} has more digits than a number is read with: it would be read as {read} without a word; \
                 write at most 15 significant digits, or quote a duration (with its unit: '{written}ms') to have it read exactly or refused as a quoted one is"
            ),
        )),
        Err(ReadError::Refused(r)) => {
            // Under tasks[i]: name the task as the validators do (from a lenient reading).
            let (ctx, rest) = match r.path.as_slice() {
                [Seg::Key(t), Seg::Index(i), rest @ ..] if t == "tasks" && !rest.is_empty() => {
                    let lenient: Option<Value> = match format {
                        Format::Json => serde_json::from_str(text).ok(),
                        Format::Yaml => serde_yaml_ng::from_str(text).ok(),
                    };
                    let name = lenient.as_ref().and_then(|v| v.get("tasks")?.get(*i)?.get("name")?.as_str().map(str::to_owned));
                    let ctx = match name {
                        Some(n) => format!("task '{n}' (tasks[{i}])"),
                        None => format!("tasks[{i}]"),
                    };
                    (Some(ctx), rest)
                }
                path => (None, path),
            };
            Err(InputError { file: source.into(), context: ctx, field: Some(strict::path_string(rest)), message: r.problem.message() })
        }
    }
}

fn strip_pos(msg: &str) -> String {
    // serde's messages end with " at line L column C"; we already print the position first.
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}
