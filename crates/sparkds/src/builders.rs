//! What the builders of a library call share: `option` and `options`, written once for
//! [`crate::BatchRead`], [`crate::StreamRead`], the writes and [`crate::check::Check`].

/// `option(key, value)` and `options(pairs)` that add to the `Vec<(String, String)>` at the
/// field path given (`options`, `spec.options`), with the doc of `option` given first.
macro_rules! option_setters {
    ($doc:literal, $($field:ident).+) => {
        #[doc = $doc]
        pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.$($field).+.push((key.into(), value.into()));
            self
        }

        /// Adds options.
        pub fn options<K: Into<String>, V: Into<String>>(
            mut self,
            options: impl IntoIterator<Item = (K, V)>,
        ) -> Self {
            self.$($field).+
                .extend(options.into_iter().map(|(k, v)| (k.into(), v.into())));
            self
        }
    };
}

pub(crate) use option_setters;
