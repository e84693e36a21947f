//! Output files written whole or not at all.

use std::io::{self, Write};
use std::path::Path;

/// Write a file atomically: into a temporary file beside it, flushed and synced, then renamed
/// over the target. A crash or error leaves either the old file or the new one, never half.
/// What the path names decides how (see [`AtomicFile::create`]): a device is written through,
/// never replaced; a directory or an other kind of file is refused.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_atomic_file(path, |w| f(w))
}

/// [`write_atomic`] for writers that need a concrete, `Send` writer (the Parquet writer).
pub fn write_atomic_file(
    path: &Path,
    f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    let mut a = AtomicFile::create(path)?;
    f(a.writer())?;
    a.commit()
}

/// How an output path is written ([`output_target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file, or none yet: replaced atomically. For a symbolic link, the file it
    /// leads to (the link stays a link).
    Replace(std::path::PathBuf),
    /// `-` (standard output), a character device (`/dev/null`, `/dev/stdout`) or a FIFO the
    /// user named: opened and written, never replaced.
    Through(std::path::PathBuf),
}

/// Decide how `path` is written, or refuse it: a directory, a block device, a socket, or a
/// symbolic link that leads nowhere is never replaced, whoever runs this (root too).
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
    use std::os::unix::fs::FileTypeExt;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Through(path.to_path_buf()));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(OutputTarget::Replace(path.to_path_buf()))
        }
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let (target, meta) = if meta.file_type().is_symlink() {
        match (std::fs::canonicalize(path), std::fs::metadata(path)) {
            (Ok(t), Ok(m)) => (t, m),
            _ => return refuse("a symbolic link that leads to no file: refusing to write through it or to replace it".into()),
        }
    } else {
        (path.to_path_buf(), meta)
    };
    let ft = meta.file_type();
    if ft.is_file() {
        Ok(OutputTarget::Replace(target))
    } else if ft.is_char_device() || ft.is_fifo() {
        Ok(OutputTarget::Through(target))
    } else if ft.is_dir() {
        refuse("is a directory".into())
    } else {
        let kind = if ft.is_block_device() {
            "a block device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        refuse(format!("is {kind}: refusing to replace it"))
    }
}

/// A file written atomically over a time: into a temporary file beside the target, renamed
/// over it by `commit` once flushed and synced. Dropped without `commit` (an error, a
/// panic, an interrupted run), the temporary file is removed and the target is untouched.
/// A target that is written through ([`OutputTarget::Through`]) is written as it goes.
pub struct AtomicFile {
    path: std::path::PathBuf,
    /// The temporary file, None when writing through.
    tmp: Option<std::path::PathBuf>,
    w: Option<io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let path = match output_target(path)? {
            OutputTarget::Through(p) => {
                let file = if p.as_os_str() == "-" {
                    use std::os::fd::AsFd;
                    std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?)
                } else {
                    std::fs::OpenOptions::new().write(true).open(&p)?
                };
                return Ok(AtomicFile {
                    path: p,
                    tmp: None,
                    w: Some(io::BufWriter::with_capacity(1 << 16, file)),
                });
            }
            OutputTarget::Replace(p) => p,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        let fname = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
        // A new file only (O_EXCL): whatever already has a temporary file's name, a link
        // someone left there included, is never opened or written.
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut attempt = 0;
        let (tmp, file) = loop {
            let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tmp = dir.join(format!(
                ".{}.tmp.{}.{n}",
                fname.to_string_lossy(),
                std::process::id()
            ));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(e) => return Err(e),
            }
        };
        Ok(AtomicFile {
            path,
            tmp: Some(tmp),
            w: Some(io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    pub fn writer(&mut self) -> &mut io::BufWriter<std::fs::File> {
        self.w.as_mut().expect("not committed yet")
    }

    /// Flush, sync and rename over the target (written through: flush).
    pub fn commit(mut self) -> io::Result<()> {
        let bw = self.w.take().expect("committed once");
        let Some(tmp) = self.tmp.take() else {
            return bw.into_inner().map(drop).map_err(|e| e.into_error());
        };
        let res = (|| {
            let file = bw.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole() {
        let d = std::env::temp_dir().join(format!("rtsched-aw-{}", std::process::id()));
        let p = d.join("out.txt");
        write_atomic(&p, |w| w.write_all(b"one")).unwrap();
        let e = write_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("boom"))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Only a regular file is replaced: a link is followed (and stays a link), a device or a
    /// FIFO is written through, a directory and a link to nothing are refused.
    #[test]
    fn outputs_replace_only_regular_files() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let d = std::env::temp_dir().join(format!("rtsched-out-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("file.txt");
        std::fs::write(&file, "old").unwrap();
        let link = d.join("link.txt");
        symlink(&file, &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");

        let dangling = d.join("dangling");
        symlink(d.join("nowhere/x"), &dangling).unwrap();
        let e = write_atomic(&dangling, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("leads to no file"), "{e}");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!d.join("nowhere").exists());

        let e = write_atomic(&d, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert_eq!(
            output_target(Path::new("/dev/null")).unwrap(),
            OutputTarget::Through("/dev/null".into())
        );
        assert_eq!(
            output_target(Path::new("-")).unwrap(),
            OutputTarget::Through("-".into())
        );

        // A FIFO: written through to its reader, still a FIFO after.
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        extern "C" {
            fn mkfifo(path: *const std::os::raw::c_char, mode: u32) -> i32;
        }
        // SAFETY: a valid NUL-terminated path; mkfifo reads it only.
        assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, |w| w.write_all(b"through")).unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 4, "no temporary file left: {names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
