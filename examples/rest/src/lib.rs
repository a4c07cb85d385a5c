//! rest: the issues of a paged, token-signed JSON API (GitHub's issues endpoint, or one shaped
//! like it), read in parallel pages, with the filters and the limit that the API evaluates pushed
//! as query parameters. It is written on the HTTP part of the connector kit
//! (`spark_datasource_http`): what is here is the API's own.

pub mod connector;

spark_datasource::export!(connector::Issues: batch_read, push_limit, prune_columns, push_filters);
