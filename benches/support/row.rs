//! One row of the bench's results, as `benches/gates.rs` and `cargo xtask bench` both write
//! it: a metric's median, beside its floor (and their ratio) when it has one; and the order
//! both run the things they alternate in.

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

/// The order of run `run` over `steps` things measured side by side: a Williams design,
/// as crossover trials use. Run `r` takes the sequence `0, 1, n-1, 2, n-2, ...` moved on by
/// `r`; with an odd count of things, every other round of `steps` runs takes each sequence
/// backwards. Over each `steps` runs every thing takes every place once; over each
/// `steps` runs (an even count) or twice that (an odd one), every thing follows every other
/// equally often. With fewer runs than that (5 at 100,000 skills) the places are still
/// balanced, the neighbours only in part.
pub(crate) fn order(run: usize, steps: usize) -> impl Iterator<Item = usize> {
    let base = move |k: usize| match k {
        0 => 0,
        k if k % 2 == 1 => k.div_ceil(2),
        k => steps - k / 2,
    };
    let backwards = steps % 2 == 1 && (run / steps.max(1)) % 2 == 1;
    (0..steps).map(move |k| {
        let k = if backwards { steps - 1 - k } else { k };
        (base(k) + run) % steps
    })
}

#[cfg(test)]
mod tests {
    /// Each run's order is every thing once; over `steps` runs each thing takes each place
    /// once; over a full design each thing follows every other equally often.
    #[test]
    fn orders_balance_places_and_neighbours() {
        for steps in 1..10 {
            let runs = if steps % 2 == 0 { steps } else { 2 * steps };
            let mut places = vec![vec![0; steps]; steps];
            let mut follows = vec![vec![0; steps]; steps];
            for run in 0..runs {
                let order: Vec<usize> = super::order(run, steps).collect();
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(
                    sorted,
                    (0..steps).collect::<Vec<_>>(),
                    "steps {steps} run {run}"
                );
                if run < steps {
                    for (place, step) in order.iter().enumerate() {
                        places[*step][place] += 1;
                    }
                }
                for pair in order.windows(2) {
                    follows[pair[1]][pair[0]] += 1;
                }
            }
            assert!(
                places.iter().flatten().all(|n| *n == 1),
                "steps {steps}: {places:?}"
            );
            let each = runs * steps.saturating_sub(1) / (steps * steps.saturating_sub(1)).max(1);
            for (step, before) in follows.iter().enumerate() {
                for (other, n) in before.iter().enumerate() {
                    let want = if other == step { 0 } else { each };
                    assert_eq!(*n, want, "steps {steps}: {step} after {other}");
                }
            }
        }
    }
}
