//! One row of the bench's results, as `benches/gates.rs` and `cargo xtask bench` both write
//! it: a metric's median, beside its floor (and their ratio) when it has one.

use serde_json::{json, Value};

/// The row of `name`: its unit, median, floor (if any, with the ratio to it) and a note.
pub(crate) fn metric(name: &str, unit: &str, median: f64, floor: Option<f64>, note: &str) -> Value {
    json!({
        "metric": name,
        "unit": unit,
        "median": median,
        "floor": floor,
        "ratio": floor.map(|f| median / f),
        "note": note,
    })
}
