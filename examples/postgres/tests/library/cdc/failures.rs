//! What can go wrong on the server, each with a message that names the slot and what to do.
