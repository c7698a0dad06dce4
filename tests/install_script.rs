//! `scripts/install.sh` (SPEC §10, channel 2) against a release served from 127.0.0.1: the
//! archive `scripts/release-archive.sh` makes from the `vl` built for these tests, its checksum
//! and `version.txt`, behind Python's HTTP server. The script installs the hooks with the copy
//! in the data dir and leaves nothing else; an archive whose checksum does not match installs
//! nothing.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{TempDir, VL, free_port, wait_for};

/// A release folder with one archive for this machine's target.
fn release(dir: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cpu = if cfg!(target_arch = "aarch64") { "aarch64" } else { "x86_64" };
    let os = if cfg!(target_os = "macos") { "apple-darwin" } else { "unknown-linux-gnu" };
    let target = format!("{cpu}-{os}");
    // release-archive.sh writes into the repository's dist/: run it on a copy of what it reads.
    let work = dir.join("src");
    std::fs::create_dir_all(work.join("scripts")).unwrap();
    std::fs::create_dir_all(work.join("docs")).unwrap();
    for file in ["Cargo.toml", "README.md", "docs/PLATFORMS.md", "scripts/release-archive.sh"] {
        std::fs::copy(root.join(file), work.join(file)).unwrap();
    }
    let made = Command::new("bash")
        .arg("scripts/release-archive.sh")
        .arg(&target)
        .arg(VL)
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let version = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("version = \"").and_then(|v| v.strip_suffix('"')).map(str::to_owned))
        .unwrap();
    std::fs::write(work.join("dist/version.txt"), format!("{version}\n")).unwrap();
    work.join("dist").to_string_lossy().into_owned()
}

/// Python's HTTP server on `folder`; killed on drop.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(folder: &str, port: u16) -> Server {
    let child = Command::new("python3")
        .args(["-m", "http.server", &port.to_string(), "--bind", "127.0.0.1", "--directory", folder])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 serves the release");
    wait_for("the release server", Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    Server(child)
}

fn install(home: &Path, base: &str) -> std::process::Output {
    Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("VIBELEARN_RELEASE_URL", base)
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(windows, ignore = "install.sh is for Linux and macOS; Windows has install.ps1")]
fn the_install_script_checks_the_archive_and_installs_the_hooks() {
    let dir = TempDir::new();
    let folder = release(dir.path());
    let port = free_port();
    let _server = serve(&folder, port);
    let base = format!("http://127.0.0.1:{port}");

    let home = TempDir::new();
    let output = install(home.path(), &base);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}{}", String::from_utf8_lossy(&output.stderr));
    assert!(said.contains("installed 6 Claude Code hooks"), "{said}");
    let copy = home.path().join(".vibelearn/bin/vl");
    assert!(copy.exists(), "the stable copy");
    assert!(home.path().join(".vibelearn/bin/vl-worker").exists(), "and the vl-worker the archive carries beside vl");
    let settings = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
    assert!(settings.contains(&copy.display().to_string()), "the hooks run the copy: {settings}");

    // A tampered archive: its checksum no longer matches, nothing is installed.
    let archive = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let other = TempDir::new();
    let output = install(other.path(), &base);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("does not match its checksum"));
    assert!(!other.path().join(".vibelearn").exists() && !other.path().join(".claude").exists(), "nothing installed");
}
