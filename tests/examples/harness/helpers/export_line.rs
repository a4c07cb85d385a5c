//! The names of a crate's `spark_datasource::export!` line, read from its source: the lint of
//! the examples' shape (one line, naming capabilities). Tests of a library read what it exports
//! from the built library (`sparkds::Library::exported`), not from its source.

/// The capabilities and pushdowns named by the `export!` line in `source` (the text of the
/// crate's `lib.rs`), in their order.
///
/// # Errors
///
/// When `source` has no `export!(Type: name, ...)` line, or more than one.
pub fn exported_names(source: &str) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = source.split("export!(").skip(1).collect();
    let line = match lines.as_slice() {
        [line] => *line,
        [] => return Err("no `spark_datasource::export!(Type: capability, ...)` line".into()),
        _ => return Err("several `export!` lines: a library exports one source".into()),
    };
    let arguments = line
        .split(')')
        .next()
        .ok_or("the `export!` line has no closing parenthesis")?;
    // The first `:` that is not part of a path's `::` ends the type.
    let bytes = arguments.as_bytes();
    let colon = (0..bytes.len())
        .find(|&i| {
            bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':')
        })
        .ok_or("the `export!` line has no `:` between the type and its capabilities")?;
    Ok(arguments[colon + 1..]
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_names_after_a_path() {
        let lib = "pub mod connector;\n\nspark_datasource::export!(connector::Source: batch_read, \
                   push_limit,\n    prune_columns,);\n";
        assert_eq!(
            exported_names(lib),
            Ok(vec![
                "batch_read".to_string(),
                "push_limit".to_string(),
                "prune_columns".to_string()
            ])
        );
    }

    #[test]
    fn a_crate_without_the_line_is_explained() {
        assert_eq!(
            exported_names("pub mod connector;"),
            Err("no `spark_datasource::export!(Type: capability, ...)` line".to_string())
        );
    }
}
