//! Speaking fio (issue 12): fio job files in ([`job`]) and out ([`export`]), and fio's own
//! JSON results in ([`import`]); the hosts and argument list of fio's client mode for a
//! fleet run ([`client`]). Pure text in, typed values out: reading files and running
//! fio are the front ends' and `lab`'s business, so every parser here is tested on fixture
//! text recorded on this project's machines (`tests/fixtures/fio/`).

pub mod client;
pub mod export;
pub mod import;
pub mod job;
