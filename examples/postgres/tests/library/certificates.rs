//! The certificates of the tests' servers, made once per test process with `openssl`: two
//! certificate authorities, and a certificate for `localhost` signed by the first, which every
//! server of the tests presents (`server.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Certificates made once: `ca.pem` and `other-ca.pem`, two authorities, and `server.crt`
/// with `server.key`, signed by the first, for `localhost` only.
pub fn certificates() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("sparkds-tls-")
            .tempdir()
            .expect("a directory for certificates")
            .keep();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for (name, subject) in [
            ("ca", "/CN=sparkds test CA"),
            ("other-ca", "/CN=another CA"),
        ] {
            let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
            let mut args = vec!["req", "-x509", "-days", "2", "-subj", subject];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &pem]);
            openssl(&dir, &args);
        }
        let mut args = vec!["req", "-subj", "/CN=localhost", "-keyout", "server.key"];
        args.extend(ec);
        args.extend(["-out", "server.csr"]);
        openssl(&dir, &args);
        std::fs::write(dir.join("server.ext"), "subjectAltName=DNS:localhost\n")
            .expect("the extensions");
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        );
        dir
    })
}

/// The path of the file `name` of [`certificates`], as an option names it.
pub fn authority(name: &str) -> String {
    certificates().join(name).display().to_string()
}

/// The bytes of the file `name` of [`certificates`].
pub fn file(name: &str) -> Vec<u8> {
    std::fs::read(certificates().join(name)).expect("a certificate")
}

/// A certificate for the role `user` (its common name), signed by the first authority, and its
/// key with mode 0600: `(certificate, key)`, made once per user.
pub fn client_certificate(user: &str) -> (PathBuf, PathBuf) {
    static MADE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let dir = certificates();
    let (cert, key) = (
        dir.join(format!("{user}.crt")),
        dir.join(format!("{user}.key")),
    );
    let mut made = MADE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !made.iter().any(|u| u == user) {
        let (key_name, csr, crt, ext) = (
            format!("{user}.key"),
            format!("{user}.csr"),
            format!("{user}.crt"),
            format!("{user}.ext"),
        );
        let subject = format!("/CN={user}");
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut args = vec!["req", "-subj", subject.as_str()];
        args.extend(ec);
        args.extend(["-keyout", key_name.as_str(), "-out", csr.as_str()]);
        openssl(dir, &args);
        // An extension makes a version 3 certificate, which rustls requires.
        std::fs::write(dir.join(&ext), "extendedKeyUsage=clientAuth\n").expect("the extensions");
        let mut args = vec!["x509", "-req", "-in", csr.as_str(), "-CA", "ca.pem"];
        args.extend(["-CAkey", "ca.key", "-CAcreateserial", "-days", "2"]);
        args.extend(["-extfile", ext.as_str(), "-out", crt.as_str()]);
        openssl(dir, &args);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("mode");
        made.push(user.to_string());
    }
    (cert, key)
}
