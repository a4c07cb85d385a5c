//! sqlite: SQLite tables and queries, read in ranges of rowid with the columns, the limit and
//! the filters pushed into the SQL, and written atomically (append or overwrite). It is written
//! on the SDK's connector kit (`spark_datasource::kit`): what is here is SQLite's own.

pub mod connector;

spark_datasource::export!(connector::Source: batch_read, batch_write, truncate, push_limit, prune_columns, push_filters);
