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

/// The order of run `run` over `steps` things measured side by side: `k` goes to
/// `(k * a + run) % steps`, with `a` the run's multiplier prime to `steps`. Over the runs
/// each thing takes every place, and follows each other thing, not always the same one (the
/// step after an index build meets the pool it dropped; a plain reversal every other run
/// only ever swapped two neighbours).
pub(crate) fn order(run: usize, steps: usize) -> impl Iterator<Item = usize> {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let primes: Vec<usize> = (1..steps.max(2)).filter(|a| gcd(*a, steps) == 1).collect();
    let a = primes[run % primes.len()];
    (0..steps).map(move |k| (k * a + run) % steps)
}

#[cfg(test)]
mod tests {
    /// Each run's order is every step once; over the runs each step follows every other.
    #[test]
    fn each_order_is_a_permutation_and_neighbours_vary() {
        for steps in 1..9 {
            let mut after = vec![vec![false; steps]; steps];
            for run in 0..(steps * steps) {
                let order: Vec<usize> = super::order(run, steps).collect();
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(
                    sorted,
                    (0..steps).collect::<Vec<_>>(),
                    "steps {steps} run {run}"
                );
                for pair in order.windows(2) {
                    after[pair[1]][pair[0]] = true;
                }
            }
            if [5, 7].contains(&steps) {
                for (s, seen) in after.iter().enumerate() {
                    let missing = seen
                        .iter()
                        .enumerate()
                        .filter(|(p, v)| *p != s && !**v)
                        .count();
                    assert_eq!(missing, 0, "step {s} of {steps} never follows some step");
                }
            }
        }
    }
}
