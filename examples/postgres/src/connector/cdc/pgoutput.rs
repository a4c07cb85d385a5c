//! The messages of `pgoutput`, PostgreSQL's logical decoding output plugin, in protocol
//! version 1 (PostgreSQL documentation, "Logical Replication Message Formats"): what
//! `pg_logical_slot_peek_binary_changes(..., 'proto_version', '1', 'binary', 'true')` returns
//! in its `data` column, one message a row.
//!
//! A transaction is `Begin`, then for each table it touches a `Relation` (its columns, sent
//! before its first change in a decoding session and again after its definition changes), its
//! changes (`Insert`, `Update`, `Delete`, `Truncate`), then `Commit`. With `binary`, a tuple's
//! values are in their types' binary send format: the format of binary COPY, which
//! `binary::Decoder` reads.

use std::fmt;

/// A log sequence number: a byte position in the write-ahead log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl fmt::Display for Lsn {
    /// As PostgreSQL writes it: the high and low 32 bits in hexadecimal, `0/16B3748`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}

impl Lsn {
    /// The LSN that `text` writes as PostgreSQL does (`0/16B3748`).
    pub fn parse(text: &str) -> Option<Lsn> {
        let (high, low) = text.split_once('/')?;
        let high = u32::from_str_radix(high, 16).ok()?;
        let low = u32::from_str_radix(low, 16).ok()?;
        Some(Lsn(u64::from(high) << 32 | u64::from(low)))
    }

    /// The bytes from `earlier` to this LSN, 0 when `earlier` is after it.
    pub fn since(self, earlier: Lsn) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// One message of the stream. Tuples borrow the bytes of the message.
#[derive(Debug, PartialEq)]
pub enum Message<'a> {
    Begin {
        /// The LSN of the transaction's commit record.
        final_lsn: Lsn,
        /// Microseconds since 2000-01-01 UTC.
        commit_time: i64,
        xid: u32,
    },
    Commit {
        commit_lsn: Lsn,
        /// The end of the commit record: where the next transaction's records start.
        end_lsn: Lsn,
        commit_time: i64,
    },
    Relation(Relation),
    Insert {
        relation: u32,
        new: Tuple<'a>,
    },
    Update {
        relation: u32,
        /// The old key (`K`, when the key changed) or the whole old row (`O`, with
        /// `REPLICA IDENTITY FULL`).
        old: Option<(OldRow, Tuple<'a>)>,
        new: Tuple<'a>,
    },
    Delete {
        relation: u32,
        old: (OldRow, Tuple<'a>),
    },
    Truncate {
        relations: Vec<u32>,
    },
    /// Anything else the plugin sends (`Origin`, `Type`, logical decoding messages): nothing
    /// that changes a row.
    Other(u8),
}

/// What an old tuple holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldRow {
    /// The replica identity's columns; the others are NULL.
    Key,
    /// Every column (`REPLICA IDENTITY FULL`).
    Full,
}

/// A table as the plugin describes it, in the schema of the change that follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    pub oid: u32,
    pub namespace: String,
    pub name: String,
    /// `d` (default: the primary key), `n` (nothing), `f` (full), `i` (an index).
    pub replica_identity: u8,
    pub columns: Vec<RelationColumn>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationColumn {
    /// Part of the replica identity.
    pub key: bool,
    pub name: String,
    pub type_oid: u32,
    pub type_modifier: i32,
}

/// The values of a row, in the order of its relation's columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuple<'a> {
    columns: u16,
    bytes: &'a [u8],
}

/// One value of a tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    /// A TOASTed value that the change did not touch, which the server did not send.
    Unchanged,
    /// The type's text output (with `binary`, only for a type without a binary send function).
    Text(&'a [u8]),
    /// The type's binary send format.
    Binary(&'a [u8]),
}

impl<'a> Tuple<'a> {
    /// The number of values.
    pub fn len(&self) -> usize {
        usize::from(self.columns)
    }

    /// The values, in column order.
    pub fn values(&self) -> Values<'a> {
        Values {
            left: self.columns,
            bytes: self.bytes,
        }
    }
}

/// The values of a tuple, checked as they are read.
pub struct Values<'a> {
    left: u16,
    bytes: &'a [u8],
}

impl<'a> Iterator for Values<'a> {
    type Item = Result<Value<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let mut input = Input(self.bytes);
        let value = input.value();
        self.bytes = input.0;
        Some(value)
    }
}

/// Parses one message.
///
/// # Errors
/// A message that is truncated, has bytes after its end, or is of a kind that changes rows
/// but is unknown: the stream cannot be read on without losing a change.
pub fn parse(message: &[u8]) -> Result<Message<'_>, String> {
    let mut input = Input(message);
    let kind = input.u8()?;
    let parsed = match kind {
        b'B' => Message::Begin {
            final_lsn: Lsn(input.u64()?),
            commit_time: input.i64()?,
            xid: input.u32()?,
        },
        b'C' => {
            let _flags = input.u8()?;
            Message::Commit {
                commit_lsn: Lsn(input.u64()?),
                end_lsn: Lsn(input.u64()?),
                commit_time: input.i64()?,
            }
        }
        b'R' => Message::Relation(input.relation()?),
        b'I' => {
            let relation = input.u32()?;
            input.expect(b'N', "an insert")?;
            Message::Insert {
                relation,
                new: input.tuple()?,
            }
        }
        b'U' => {
            let relation = input.u32()?;
            let old = match input.u8()? {
                b'K' => Some((OldRow::Key, input.tuple()?)),
                b'O' => Some((OldRow::Full, input.tuple()?)),
                b'N' => None,
                other => return Err(unexpected(other, "an update")),
            };
            if old.is_some() {
                input.expect(b'N', "an update")?;
            }
            Message::Update {
                relation,
                old,
                new: input.tuple()?,
            }
        }
        b'D' => {
            let relation = input.u32()?;
            let old = match input.u8()? {
                b'K' => (OldRow::Key, input.tuple()?),
                b'O' => (OldRow::Full, input.tuple()?),
                other => return Err(unexpected(other, "a delete")),
            };
            Message::Delete { relation, old }
        }
        b'T' => {
            let count = input.u32()?;
            let _options = input.u8()?;
            let relations = (0..count)
                .map(|_| input.u32())
                .collect::<Result<Vec<_>, _>>()?;
            Message::Truncate { relations }
        }
        // Origin, Type, logical decoding message: their bytes are not needed.
        b'O' | b'Y' | b'M' => return Ok(Message::Other(kind)),
        other => {
            return Err(format!(
                "a message of unknown kind `{}` (0x{other:02x}) in the change stream",
                char::from(other).escape_default()
            ))
        }
    };
    if !input.0.is_empty() {
        return Err(format!(
            "{} bytes after the end of a `{}` message",
            input.0.len(),
            char::from(kind)
        ));
    }
    Ok(parsed)
}

fn unexpected(byte: u8, within: &str) -> String {
    format!(
        "an unexpected tuple marker `{}` in {within}",
        char::from(byte).escape_default()
    )
}

/// The bytes still to read of a message.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("a truncated message in the change stream".to_string());
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let bytes = self.take(N)?;
        let mut array = [0; N];
        array.copy_from_slice(bytes);
        Ok(array)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    fn expect(&mut self, byte: u8, within: &str) -> Result<(), String> {
        match self.u8()? {
            b if b == byte => Ok(()),
            other => Err(unexpected(other, within)),
        }
    }

    /// A NUL-terminated string.
    fn string(&mut self) -> Result<String, String> {
        let end = self
            .0
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| "a string without its end in the change stream".to_string())?;
        let text = String::from_utf8(self.0[..end].to_vec())
            .map_err(|_| "a name that is not UTF-8 in the change stream".to_string())?;
        self.0 = &self.0[end + 1..];
        Ok(text)
    }

    fn relation(&mut self) -> Result<Relation, String> {
        let oid = self.u32()?;
        let namespace = self.string()?;
        let name = self.string()?;
        let replica_identity = self.u8()?;
        let count = self.u16()?;
        let columns = (0..count)
            .map(|_| {
                Ok(RelationColumn {
                    key: self.u8()? & 1 == 1,
                    name: self.string()?,
                    type_oid: self.u32()?,
                    type_modifier: self.i32()?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Relation {
            oid,
            // The plugin sends "pg_catalog" as an empty string.
            namespace: if namespace.is_empty() {
                "pg_catalog".to_string()
            } else {
                namespace
            },
            name,
            replica_identity,
            columns,
        })
    }

    /// A tuple, checked whole, so that its values can be read without failing halfway.
    fn tuple(&mut self) -> Result<Tuple<'a>, String> {
        let columns = self.u16()?;
        let start = self.0;
        for _ in 0..columns {
            self.value()?;
        }
        let length = start.len() - self.0.len();
        Ok(Tuple {
            columns,
            bytes: &start[..length],
        })
    }

    fn value(&mut self) -> Result<Value<'a>, String> {
        Ok(match self.u8()? {
            b'n' => Value::Null,
            b'u' => Value::Unchanged,
            kind @ (b't' | b'b') => {
                let length = self.i32()?;
                let length = usize::try_from(length)
                    .map_err(|_| format!("a value of length {length} in the change stream"))?;
                let bytes = self.take(length)?;
                if kind == b't' {
                    Value::Text(bytes)
                } else {
                    Value::Binary(bytes)
                }
            }
            other => {
                return Err(format!(
                    "a value of unknown kind `{}` in the change stream",
                    char::from(other).escape_default()
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
            .collect()
    }

    // Messages as PostgreSQL 15 sent them for `CREATE TABLE t (id int primary key, name
    // text)`, `INSERT ... (1, 'a')`, `UPDATE ... SET name = 'c' WHERE id = 1` and `DELETE
    // ... WHERE id = 2`, through `pg_logical_slot_peek_binary_changes`.
    #[test]
    fn messages_of_a_real_server_parse() -> Result<(), String> {
        assert_eq!(
            parse(&hex("420000000000628608000304b92bcbd15f000002d6"))?,
            Message::Begin {
                final_lsn: Lsn(0x628608),
                commit_time: 0x000304b92bcbd15f,
                xid: 726
            }
        );
        let relation = hex(
            "52000040007075626c69630074006400020169640000000017ffffffff006e616d650000000019ffffffff",
        );
        let Message::Relation(relation) = parse(&relation)? else {
            panic!("a relation");
        };
        assert_eq!(
            (relation.namespace.as_str(), relation.name.as_str()),
            ("public", "t")
        );
        assert_eq!(relation.replica_identity, b'd');
        let columns: Vec<_> = relation
            .columns
            .iter()
            .map(|c| (c.key, c.name.as_str(), c.type_oid, c.type_modifier))
            .collect();
        assert_eq!(columns, [(true, "id", 23, -1), (false, "name", 25, -1)]);
        let insert = hex("49000040004e0002620000000400000001620000000161");
        let Message::Insert {
            relation: 16384,
            new,
        } = parse(&insert)?
        else {
            panic!("an insert");
        };
        let values = new.values().collect::<Result<Vec<_>, _>>()?;
        assert_eq!(values, [Value::Binary(&[0, 0, 0, 1]), Value::Binary(b"a")]);
        let delete = hex("44000040004b00026200000004000000026e");
        let Message::Delete {
            old: (OldRow::Key, old),
            ..
        } = parse(&delete)?
        else {
            panic!("a delete");
        };
        assert_eq!(old.values().nth(1), Some(Ok(Value::Null)));
        assert_eq!(
            parse(&hex("430000000000006286080000000000628638000304b92bcbd15f"))?,
            Message::Commit {
                commit_lsn: Lsn(0x628608),
                end_lsn: Lsn(0x628638),
                commit_time: 0x000304b92bcbd15f
            }
        );
        Ok(())
    }

    #[test]
    fn truncated_messages_and_trailing_bytes_are_refused() {
        let insert = hex("49000040004e0002620000000400000001620000000161");
        for cut in 1..insert.len() {
            assert!(parse(&insert[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = insert.clone();
        longer.push(0);
        assert_eq!(
            parse(&longer).err().as_deref(),
            Some("1 bytes after the end of a `I` message")
        );
        assert_eq!(
            parse(b"Z").err().as_deref(),
            Some("a message of unknown kind `Z` (0x5a) in the change stream")
        );
    }

    #[test]
    fn lsns_read_and_write_as_postgresql_does() {
        assert_eq!(Lsn::parse("0/16B3748"), Some(Lsn(0x16B3748)));
        assert_eq!(Lsn::parse("1A/0"), Some(Lsn(0x1A_0000_0000)));
        assert_eq!(Lsn(0x1A_0016_B374).to_string(), "1A/16B374");
        assert_eq!(Lsn::parse("16B3748"), None);
    }
}
