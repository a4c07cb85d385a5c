//! The listing of the book's section *Secret options* (`book/src/security/validation.md`): a
//! source reads its password as a `Secret`, which shows as `*********(redacted)` wherever it is
//! formatted, and uses its value in one place.

use spark_datasource::{Options, Result, Secret};

/// Checks a user and a password, as a database's login would.
fn log_in(user: &str, password: &str) -> bool {
    user == "spark" && password == "open-sesame"
}

// ANCHOR: secret
/// What the source keeps of its options: the password stays a `Secret`, so `{:?}` of the
/// source, a log line or an error that formats it shows `*********(redacted)`.
#[derive(Debug)]
struct Connection {
    user: String,
    password: Secret,
}

impl Connection {
    fn from_options(options: &Options) -> Result<Connection> {
        options.expect_only(&["user", "password"])?;
        Ok(Connection {
            user: options.required("user")?,
            // "missing option `password`: set it with .option(\"password\", ...), it must be a
            // secret" when the query does not set it.
            password: options.required::<Secret>("password")?,
        })
    }

    fn open(&self) -> bool {
        // The one place that needs the value.
        log_in(&self.user, self.password.expose())
    }
}
// ANCHOR_END: secret

#[test]
fn a_password_read_as_a_secret_is_used_but_never_shown() -> Result<()> {
    let options = Options::new([("user", "spark"), ("password", "open-sesame")]);
    let connection = Connection::from_options(&options)?;
    assert!(connection.open());
    assert_eq!(
        format!("{connection:?}"),
        r#"Connection { user: "spark", password: Secret(*********(redacted)) }"#
    );
    assert_eq!(
        format!("{options:?}"),
        r#"{"user": "spark", "password": "*********(redacted)"}"#
    );
    Ok(())
}

#[test]
fn a_missing_password_is_explained() {
    let options = Options::new([("user", "spark")]);
    let error = Connection::from_options(&options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "missing option `password`: set it with .option(\"password\", ...), it must be a secret"
    );
}

#[test]
fn a_malformed_secret_option_is_named_without_its_value() {
    let options = Options::new([("token", "not-a-number")]);
    let error = options.required::<u64>("token").unwrap_err();
    assert_eq!(
        error.to_string(),
        "option `token` must be a non-negative integer, got `*********(redacted)`"
    );
}
