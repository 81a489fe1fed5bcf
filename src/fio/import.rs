//! fio results in: fio's JSON and JSON+ output (client mode included) as runs.
