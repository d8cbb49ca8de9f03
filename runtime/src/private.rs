//! Files on a shared machine (a university GPU server, a lab box, a cluster node), where the
//! temporary folder is shared by every user and anyone can create a name in it first.
//!
//! * **The harness cache** (the CUB and CUDA C harnesses that the `reduce` command line builds with nvcc
//!   and runs) lives in the user's own space: `$REDUCE_CUB_CACHE` if set, else
//!   `$XDG_CACHE_HOME/reduce-scan` (an absolute `XDG_CACHE_HOME` only, as the XDG base
//!   directory specification says), else `~/.cache/reduce-scan` — never in the shared temporary
//!   folder. It is created with mode 0700. Before a cached program runs, the folder and the file
//!   are checked: owned by this user (the effective uid) and not writable by group or others,
//!   the file a regular file (not a link). Otherwise the run is refused with one line that names
//!   the path and the fix ([`Error::Invalid`]: exit status 2 in the CLI).
//! * **Temporary files** live in a private folder of their own ([`PrivateDir`]: a random name,
//!   created exclusively with mode 0700, removed with everything in it when dropped); the files
//!   in it are created with `O_EXCL` (never through a link) and mode 0600 ([`create_new`]).
//!   Another user can neither predict a name nor enter the folder.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable that names the harness cache, overriding the default.
pub const CACHE_ENV: &str = "REDUCE_CUB_CACHE";

/// The folder under `$XDG_CACHE_HOME` (or `~/.cache`) that holds the harness cache.
const CACHE_NAME: &str = "reduce-scan";

/// What decides where the harness cache is: `REDUCE_CUB_CACHE`, `XDG_CACHE_HOME`, `HOME`.
#[derive(Clone, Debug, Default)]
pub struct CacheEnv {
    /// `$REDUCE_CUB_CACHE`.
    pub over: Option<OsString>,
    /// `$XDG_CACHE_HOME`.
    pub xdg: Option<OsString>,
    /// `$HOME`.
    pub home: Option<OsString>,
}

impl CacheEnv {
    /// This process's environment.
    pub fn of_process() -> Self {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        Self { over: var(CACHE_ENV), xdg: var("XDG_CACHE_HOME"), home: var("HOME") }
    }

    /// The cache folder, or `None` where the environment names none (no `HOME` either).
    pub fn dir(&self) -> Option<PathBuf> {
        if let Some(over) = &self.over {
            return Some(PathBuf::from(over));
        }
        let xdg = self.xdg.as_ref().map(PathBuf::from).filter(|p| p.is_absolute());
        let home = || self.home.as_ref().map(|h| PathBuf::from(h).join(".cache"));
        xdg.or_else(home).map(|base| base.join(CACHE_NAME))
    }
}

/// The harness cache of this process's environment, or why there is none ([`Error::Unsupported`]).
pub fn cache_dir() -> Result<PathBuf> {
    CacheEnv::of_process().dir().ok_or_else(|| {
        Error::Unsupported(format!(
            "no folder for the harness cache: set {CACHE_ENV}, XDG_CACHE_HOME or HOME to a folder of your own"
        ))
    })
}

/// The effective uid of this process: who owns what it creates.
pub fn euid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

/// What is wrong with `meta` for a file or folder this user may trust to hold programs, in
/// words that follow "it": `None` when it is owned by this user and not writable by group or
/// others.
fn untrusted(meta: &Metadata) -> Option<String> {
    let me = euid();
    if meta.uid() != me {
        return Some(format!("belongs to uid {}, not to you (uid {me})", meta.uid()));
    }
    let mode = meta.mode() & 0o7777;
    (mode & 0o022 != 0).then(|| format!("is writable by group or others (mode {mode:04o})"))
}

/// Creates the harness cache `dir` (and any missing folder above it) with mode 0700, then
/// checks it ([`check_folder`]).
pub fn open_cache(dir: &Path) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::Unsupported(format!("cannot create the harness cache {}: {e}", dir.display())))?;
    check_folder(dir)
}

/// Refuses a harness cache `dir` that is not a folder, is owned by someone else, or is
/// writable by group or others: another user could have placed a program in it.
pub fn check_folder(dir: &Path) -> Result<()> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| Error::Unsupported(format!("cannot read the harness cache {}: {e}", dir.display())))?;
    let own = format!("or set {CACHE_ENV} to a folder of your own");
    let d = dir.display();
    if !meta.is_dir() {
        return Err(Error::Invalid(format!("the harness cache {d} is not a folder; remove it, {own}")));
    }
    let fix = match untrusted(&meta) {
        None => return Ok(()),
        Some(p) if meta.uid() != euid() => format!("{p}, so another user could place a program in it; remove it"),
        Some(p) => format!("{p}, so another user could place a program in it; make it yours alone (chmod 700 {d})"),
    };
    Err(Error::Invalid(format!("the harness cache {d} {fix}, {own}")))
}

/// A cached program at `path`, if there is one this user may run: `Ok(None)` where there is
/// none; refused ([`Error::Invalid`], one line naming the path and the fix) where it is not a
/// regular file, is owned by someone else, or is writable by group or others.
pub fn trusted_program(path: &Path) -> Result<Option<PathBuf>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Unsupported(format!("cannot read the cached harness {}: {e}", path.display()))),
    };
    let problem = if meta.is_file() { untrusted(&meta) } else { Some("is not a regular file".to_string()) };
    match problem {
        None => Ok(Some(path.to_path_buf())),
        Some(problem) => Err(refused_file(path, &problem)),
    }
}

fn refused_file(path: &Path, problem: &str) -> Error {
    Error::Invalid(format!(
        "the cached harness {} {problem}, so it is not run; remove it (the next run rebuilds it)",
        path.display()
    ))
}

/// The CLI's check before a run that may build or run a harness (`--compare-cub`,
/// `--compare-c`): where the cache folder exists, it and everything in it must pass the
/// checks of [`check_folder`] and [`trusted_program`]. A folder that does not exist yet is
/// fine: it is created, private, when a harness is built.
pub fn check_cache() -> Result<()> {
    let Some(dir) = CacheEnv::of_process().dir() else { return Ok(()) };
    if std::fs::symlink_metadata(&dir).is_err() {
        return Ok(());
    }
    check_folder(&dir)?;
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| Error::Unsupported(format!("cannot read the harness cache {}: {e}", dir.display())))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path);
        // A folder here is a build in progress (`PrivateDir`), checked as the cache folder is.
        let problem = match &meta {
            Ok(m) if m.is_dir() || m.is_file() => untrusted(m),
            Ok(_) => Some("is not a regular file".to_string()),
            Err(_) => None,
        };
        if let Some(problem) = problem {
            return Err(refused_file(&path, &problem));
        }
    }
    Ok(())
}

/// A private temporary folder: a random name, created exclusively (by the `tempfile` crate)
/// with mode 0700, removed with everything in it when dropped.
#[derive(Debug)]
pub struct PrivateDir(tempfile::TempDir);

impl PrivateDir {
    /// A new folder `<prefix><random>` in the temporary folder (`$TMPDIR`, else `/tmp`).
    pub fn new(prefix: &str) -> Result<Self> {
        Self::builder(prefix)
            .tempdir()
            .map(Self)
            .map_err(|e| Error::Unsupported(format!("cannot create a private temporary folder: {e}")))
    }

    /// A new folder `<prefix><random>` inside `parent` (a build in the harness cache, so that its
    /// result moves into the cache with a rename).
    pub fn inside(parent: &Path, prefix: &str) -> Result<Self> {
        Self::builder(prefix)
            .tempdir_in(parent)
            .map(Self)
            .map_err(|e| Error::Unsupported(format!("cannot create a private folder in {}: {e}", parent.display())))
    }

    /// `tempfile`'s builder for a folder of mode 0700 (its default is the umask's, often 0755).
    fn builder(prefix: &str) -> tempfile::Builder<'_, '_> {
        let mut b = tempfile::Builder::new();
        b.prefix(prefix).permissions(std::fs::Permissions::from_mode(0o700));
        b
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Creates the file `path`, which must not exist (`O_CREAT | O_EXCL`: a link planted at the
/// name is never followed), with mode `mode` (0600 for data, 0700 for a script).
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    let file = OpenOptions::new().write(true).create_new(true).mode(mode).open(path)?;
    // The process's umask may have taken bits of `mode` away; set exactly what was asked.
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    Ok(file)
}

/// A file in a private temporary folder of its own, holding what its creator wrote; the folder
/// (with anything a harness wrote beside the file, e.g. `FILE.out`) is removed when dropped.
pub struct TempFile(pub PathBuf, #[allow(dead_code, reason = "held for its drop")] PrivateDir);

impl TempFile {
    /// A new file `<stem>.<ext>` in a new private folder `reduce-<stem>-<random>`, holding what
    /// `fill` writes (buffered); `what` names it in the error.
    pub fn write(
        stem: &str,
        ext: &str,
        what: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Self> {
        let dir = PrivateDir::new(&format!("reduce-{stem}-"))?;
        let path = dir.path().join(format!("{stem}.{ext}"));
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(create_new(&path, 0o600)?);
            fill(&mut w)?;
            w.flush()
        };
        write().map_err(|e| Error::Unsupported(format!("cannot write {what} {}: {e}", path.display())))?;
        Ok(TempFile(path, dir))
    }
}

/// What the tests of this crate and of the `reduce` command line need of a shared machine:
/// scripts written safely, files given away. Not for programs.
#[doc(hidden)]
pub mod testing {
    use super::*;

    /// Writes the script `path` (mode 0700) through a child `sh`, so that this process never
    /// holds the file open for writing: a fork by another test thread then cannot keep it open
    /// past our write, and running it never fails with ETXTBSY ("Text file busy").
    #[allow(clippy::missing_panics_doc)]
    pub fn write_script(path: &Path, text: &str) {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "umask 077 && cat > \"$0\" && chmod 700 \"$0\""])
            .arg(path)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        assert!(child.wait().unwrap().success(), "cannot write the script {}", path.display());
    }

    /// Makes `path` another user's (uid 65534, `nobody`), as only root can. `false` where this
    /// process is not root.
    pub fn give_away(path: &Path) -> bool {
        euid() == 0 && {
            std::os::unix::fs::lchown(path, Some(65534), Some(65534)).unwrap();
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::give_away;
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
    }

    #[test]
    fn the_cache_is_in_the_users_own_space() {
        let env = |over: Option<&str>, xdg: Option<&str>, home: Option<&str>| {
            CacheEnv { over: over.map(Into::into), xdg: xdg.map(Into::into), home: home.map(Into::into) }.dir()
        };
        let home = Some("/home/ada");
        assert_eq!(env(None, None, home), Some("/home/ada/.cache/reduce-scan".into()));
        assert_eq!(env(None, Some("/var/cache/ada"), home), Some("/var/cache/ada/reduce-scan".into()));
        // The XDG specification: a relative XDG_CACHE_HOME is ignored.
        assert_eq!(env(None, Some("cache"), home), Some("/home/ada/.cache/reduce-scan".into()));
        assert_eq!(env(Some("/scratch/mine"), Some("/x"), home), Some("/scratch/mine".into()));
        assert_eq!(env(None, None, None), None);
        // Whatever TMPDIR says, it is not consulted.
        // fixed temp name: none is made; the cache must not be under the shared folder
        let tmp = std::env::temp_dir();
        assert!(!env(None, None, home).unwrap().starts_with(&tmp));
    }

    #[test]
    fn the_cache_folder_is_created_private_and_checked() {
        let root = PrivateDir::new("reduce-test-cache-").unwrap();
        let dir = root.path().join("a/b/reduce-scan");
        open_cache(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700, "missing folders above it are made private too");
        for bad in [0o770, 0o707, 0o777, 0o720] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(bad)).unwrap();
            let e = check_folder(&dir).unwrap_err().to_string();
            assert!(matches!(check_folder(&dir), Err(Error::Invalid(_))), "{e}");
            assert!(!e.contains('\n') && e.contains(&dir.display().to_string()), "{e}");
            assert!(e.contains(&format!("mode {bad:04o}")) && e.contains("chmod 700"), "{e}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        check_folder(&dir).unwrap();
        let file = root.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(check_folder(&file).unwrap_err().to_string().contains("is not a folder"));
    }

    #[test]
    fn another_users_folder_or_program_is_refused() {
        // As root (CI, the development machines): a folder and a file given to uid 65534. As
        // anyone else: `/` and `/etc/passwd`, which belong to root.
        let root = PrivateDir::new("reduce-test-owner-").unwrap();
        let (dir, file) = (root.path().join("cache"), root.path().join("cache/harness"));
        open_cache(&dir).unwrap();
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(trusted_program(&file).unwrap(), Some(file.clone()));
        let (dir, file) =
            if give_away(&file) && give_away(&dir) { (dir, file) } else { ("/".into(), "/etc/passwd".into()) };
        for e in [check_folder(&dir).unwrap_err(), trusted_program(&file).unwrap_err()] {
            let e = e.to_string();
            assert!(e.contains("belongs to uid ") && e.contains("not to you") && e.contains("remove it"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_program_writable_by_others_or_a_link_is_refused() {
        let root = PrivateDir::new("reduce-test-program-").unwrap();
        let file = root.path().join("harness");
        assert_eq!(trusted_program(&file).unwrap(), None, "none there: build it");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        for bad in [0o775, 0o757, 0o777] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(bad)).unwrap();
            let e = trusted_program(&file).unwrap_err().to_string();
            assert!(!e.contains('\n') && e.contains(&file.display().to_string()), "{e}");
            assert!(e.contains(&format!("mode {bad:04o}")) && e.contains("remove it"), "{e}");
        }
        let link = root.path().join("link");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(trusted_program(&link).unwrap_err().to_string().contains("is not a regular file"));
    }

    #[test]
    fn a_planted_link_is_never_followed() {
        let root = PrivateDir::new("reduce-test-link-").unwrap();
        let (victim, link) = (root.path().join("victim"), root.path().join("link"));
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert_eq!(create_new(&link, 0o600).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let mut f = create_new(&root.path().join("new"), 0o600).unwrap();
        f.write_all(b"x").unwrap();
        assert_eq!(mode(&root.path().join("new")), 0o600);
    }

    #[test]
    fn temporary_files_are_private_and_removed() {
        let a = TempFile::write("t", "bin", "a test file", |w| w.write_all(b"abc")).unwrap();
        let b = TempFile::write("t", "bin", "a test file", |w| w.write_all(b"def")).unwrap();
        assert_ne!(a.0.parent(), b.0.parent(), "a folder of its own each, under a random name");
        assert_eq!(std::fs::read(&a.0).unwrap(), b"abc");
        assert_eq!((mode(&a.0), mode(a.0.parent().unwrap())), (0o600, 0o700));
        let dir = a.0.parent().unwrap().to_path_buf();
        assert!(dir.file_name().unwrap().to_string_lossy().starts_with("reduce-t-"));
        std::fs::write(a.0.with_extension("bin.out"), "a harness's output").unwrap();
        drop(a);
        assert!(!dir.exists(), "the folder and all in it are removed");
    }
}
