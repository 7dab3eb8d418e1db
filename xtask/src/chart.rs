//! The chart `cargo xtask bench --write-doc` writes beside `docs/performance.md`
//! (`performance-ratios.svg`): each gated ratio to the checked floor (the index build in
//! process, `skillctl list` as a whole process) against the number of skills, the
//! real-world corpus in a column of its own, with the target lines, so that the distance to
//! the floor is seen at a glance. Plain SVG text written here: no font is read or measured
//! (the viewer draws the labels), and the same results always give the same bytes.

use std::fmt::Write as _;

use serde_json::Value;

/// The file's name, beside `docs/performance.md`.
pub(crate) const FILE_NAME: &str = "performance-ratios.svg";

/// The generated sizes, one column each (evenly spaced: a logarithmic axis), then the
/// real-world corpus.
const SIZES: [&str; 3] = ["1000", "10000", "100000"];
const COLUMNS: [&str; 4] = ["1,000", "10,000", "100,000", "real-world"];

/// One ratio drawn: the metric's name before `, <label> skills`, its target and colour.
struct Series {
    prefix: &'static str,
    legend: &'static str,
    target: f64,
    target_legend: &'static str,
    colour: &'static str,
}

/// The gated ratios to the checked floor (issue 43), with their targets.
const SERIES: [Series; 2] = [
    Series {
        prefix: "index build against the checked floor",
        legend: "in process: index build / checked floor",
        target: 1.2,
        target_legend: "target 1.2x",
        colour: "#1f6fb4",
    },
    Series {
        prefix: "whole-process list against the checked floor process",
        legend: "whole process: skillctl list / checked floor process",
        target: 1.5,
        target_legend: "target 1.5x",
        colour: "#c9521a",
    },
];

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 740.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 370.0;

/// Each series's metric prefix and target, for the bench's test that they are its gates.
#[cfg(test)]
pub(crate) fn targets() -> impl Iterator<Item = (&'static str, f64)> {
    SERIES.iter().map(|s| (s.prefix, s.target))
}

/// The ratio of `prefix` at one column's corpus (`1000`, ..., `real`), if the run has it.
fn ratio(metrics: &[Value], prefix: &str, label: &str) -> Option<f64> {
    let name = format!("{prefix}, {label} skills");
    metrics
        .iter()
        .find(|m| m["metric"].as_str() == Some(name.as_str()))
        .and_then(|m| m["ratio"].as_f64())
        .filter(|r| r.is_finite())
}

/// Each series's ratio per column (`None` where the run did not measure it).
fn points(metrics: &[Value]) -> Vec<[Option<f64>; 4]> {
    SERIES
        .iter()
        .map(|s| {
            let mut row = [None; 4];
            for (i, label) in SIZES.iter().chain(&["real"]).enumerate() {
                row[i] = ratio(metrics, s.prefix, label);
            }
            row
        })
        .collect()
}

/// The vertical range and tick step: from the floor (1x, or lower if a ratio is) to above
/// the highest ratio and target.
fn y_range(points: &[[Option<f64>; 4]]) -> (f64, f64, f64) {
    let values = points.iter().flatten().flatten().copied();
    let high = values
        .clone()
        .chain(SERIES.iter().map(|s| s.target))
        .fold(1.0_f64, f64::max);
    let low = values.fold(1.0_f64, f64::min);
    let step = if high - low <= 1.2 {
        0.1
    } else if high - low <= 3.0 {
        0.25
    } else {
        0.5
    };
    let lo = (low / step).floor() * step;
    let hi = ((high + step * 0.5) / step).ceil() * step;
    (lo, hi, step)
}

fn column_x(i: usize) -> f64 {
    // Three evenly spaced columns for the sizes, a gap, then the real-world corpus.
    let slot = (RIGHT - LEFT) / 4.6;
    let x = LEFT + slot * (i as f64 + 0.5);
    if i == 3 {
        x + slot * 0.6
    } else {
        x
    }
}

/// The SVG for the ratios in `metrics` (a run's rows, as saved under `target/bench-results`).
pub(crate) fn ratios_svg(metrics: &[Value], subtitle: &str) -> String {
    let points = points(metrics);
    let (lo, hi, step) = y_range(&points);
    let y = |v: f64| BOTTOM - (v - lo) / (hi - lo) * (BOTTOM - TOP);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        out,
        "<title>Each gated ratio to the checked floor against the number of skills</title>"
    );
    let _ = writeln!(
        out,
        "<rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"white\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Distance to the checked floor (ratio of medians; 1x = the floor)</text>"
    );
    let _ = writeln!(
        out,
        "<text x=\"{LEFT}\" y=\"42\" fill=\"#555\">{}</text>",
        escape(subtitle)
    );
    axes(&mut out, lo, hi, step, &y);
    for i in 0..COLUMNS.len() {
        if points.iter().all(|row| row[i].is_none()) {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#888\">not in this run</text>",
                column_x(i),
                (TOP + BOTTOM) / 2.0
            );
        }
    }
    for (series, row) in SERIES.iter().zip(&points) {
        target_line(&mut out, series, y(series.target));
        series_marks(&mut out, series, row, &y);
    }
    legend(&mut out);
    out.push_str("</svg>\n");
    out
}

/// The frame, the horizontal grid with its ratios, the columns' names and the floor line.
fn axes(out: &mut String, lo: f64, hi: f64, step: f64, y: &dyn Fn(f64) -> f64) {
    let ticks = ((hi - lo) / step).round() as usize;
    for k in 0..=ticks {
        let v = lo + step * k as f64;
        let (yy, stroke) = if (v - 1.0).abs() < 1e-9 {
            (y(v), "stroke=\"#000\" stroke-width=\"1.5\"")
        } else {
            (y(v), "stroke=\"#ddd\"")
        };
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{RIGHT}\" y2=\"{yy:.1}\" {stroke}/>"
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.2}x</text>",
            LEFT - 6.0,
            yy + 4.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#000\">checked floor</text>",
        LEFT + 4.0,
        y(1.0) - 4.0
    );
    let gap = (column_x(2) + column_x(3)) / 2.0;
    let _ = writeln!(
        out,
        "<line x1=\"{gap:.1}\" y1=\"{TOP}\" x2=\"{gap:.1}\" y2=\"{BOTTOM}\" stroke=\"#999\" stroke-dasharray=\"2 4\"/>"
    );
    for (i, name) in COLUMNS.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{name}</text>",
            column_x(i),
            BOTTOM + 18.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">skills (generated corpora, logarithmic) | the real-world corpus</text>",
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 38.0
    );
    let _ = writeln!(
        out,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000\"/>",
        RIGHT - LEFT,
        BOTTOM - TOP
    );
}

fn target_line(out: &mut String, series: &Series, yy: f64) {
    let _ = writeln!(
        out,
        "<line x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{RIGHT}\" y2=\"{yy:.1}\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"8 5\"/>",
        series.colour
    );
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"{}\">{}</text>",
        RIGHT - 4.0,
        yy - 4.0,
        series.colour,
        series.target_legend
    );
}

/// The generated sizes joined by a line; the real-world corpus a diamond of its own; each
/// point labelled with its ratio.
fn series_marks(out: &mut String, series: &Series, row: &[Option<f64>; 4], y: &dyn Fn(f64) -> f64) {
    let line: Vec<String> = row[..3]
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", column_x(i), y(v))))
        .collect();
    if line.len() > 1 {
        let _ = writeln!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
            line.join(" "),
            series.colour
        );
    }
    for (i, v) in row.iter().enumerate() {
        let Some(v) = *v else { continue };
        let (cx, cy) = (column_x(i), y(v));
        if i == 3 {
            let _ = writeln!(
                out,
                "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{}\"/>",
                cx,
                cy - 6.0,
                cx + 6.0,
                cy,
                cx,
                cy + 6.0,
                cx - 6.0,
                cy,
                series.colour
            );
        } else {
            let _ = writeln!(
                out,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"4.5\" fill=\"{}\"/>",
                series.colour
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{}\">{v:.2}x</text>",
            cx + 7.0,
            cy - 8.0,
            series.colour
        );
    }
}

fn legend(out: &mut String) {
    for (k, series) in SERIES.iter().enumerate() {
        let yy = HEIGHT - 16.0;
        let x = LEFT + 340.0 * k as f64;
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"2\"/>",
            yy - 4.0,
            x + 22.0,
            yy - 4.0,
            series.colour
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{yy:.1}\">{}</text>",
            x + 28.0,
            series.legend
        );
    }
}

/// `text` safe inside an SVG element.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A saved run's rows, as `target/bench-results` holds them (a quick run: no 100,000).
    fn fixture(scale: f64) -> Vec<Value> {
        let row = |name: &str, ratio: f64| json!({"metric": name, "unit": "ms", "median": ratio * 5.0, "floor": 5.0, "ratio": ratio});
        vec![
            row("index build against the checked floor, 100 skills", 1.1),
            row(
                "index build against the checked floor, 1000 skills",
                1.37 * scale,
            ),
            row("index build against the checked floor, 10000 skills", 1.33),
            row("index build against the checked floor, real skills", 1.69),
            row(
                "whole-process list against the checked floor process, 1000 skills",
                1.71,
            ),
            row(
                "whole-process list against the checked floor process, 10000 skills",
                1.56,
            ),
            row(
                "whole-process list against the checked floor process, real skills",
                2.16,
            ),
            row("index build, 1000 skills", 9.9),
        ]
    }

    /// The element names of `svg`, checked to nest and close (a small well-formedness
    /// check: every tag closed in order, attributes quoted, text free of a bare `<` or `&`).
    fn elements(svg: &str) -> Vec<String> {
        let mut open: Vec<String> = Vec::new();
        let mut seen = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let text = &rest[..start];
            assert!(
                !text.contains('&') || text.contains("&amp;") || text.contains("&lt;"),
                "a bare & in {text:?}"
            );
            let end = rest[start..].find('>').expect("a tag is closed") + start;
            let tag = &rest[start + 1..end];
            assert!(!tag.contains('<'), "a < inside a tag: {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes: {tag:?}"
            );
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(
                    open.pop().as_deref(),
                    Some(name),
                    "</{name}> closes another"
                );
            } else {
                let name = tag
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('/');
                seen.push(name.to_owned());
                if !tag.ends_with('/') {
                    open.push(name.to_owned());
                }
            }
            rest = &rest[end + 1..];
        }
        assert!(open.is_empty(), "left open: {open:?}");
        assert!(rest.trim().is_empty());
        seen
    }

    #[test]
    fn the_chart_is_well_formed_and_draws_each_ratio_and_target() {
        let svg = ratios_svg(&fixture(1.0), "a quick run, 2026-11-28 <UTC> & 2 cores");
        let names = elements(&svg);
        assert_eq!(names.first().map(String::as_str), Some("svg"));
        // Two series: a line through the generated sizes each, and 3 points each (one
        // generated size missing from a quick run is skipped, not drawn at zero).
        assert_eq!(names.iter().filter(|n| *n == "polyline").count(), 2);
        assert_eq!(names.iter().filter(|n| *n == "circle").count(), 4);
        assert_eq!(names.iter().filter(|n| *n == "polygon").count(), 2);
        for label in [
            "1.37x",
            "1.33x",
            "1.69x",
            "1.71x",
            "1.56x",
            "2.16x",
            "target 1.2x",
            "target 1.5x",
            "real-world",
            "100,000",
        ] {
            assert!(svg.contains(label), "{label} missing");
        }
        assert!(svg.contains("&lt;UTC&gt; &amp; 2 cores"));
        assert!(
            !svg.contains("9.90x"),
            "a row against the plain floor is not drawn"
        );
    }

    #[test]
    fn the_chart_is_the_same_for_the_same_run_and_moves_with_it() {
        let a = ratios_svg(&fixture(1.0), "run");
        assert_eq!(a, ratios_svg(&fixture(1.0), "run"));
        assert_ne!(a, ratios_svg(&fixture(1.1), "run"));
    }

    #[test]
    fn a_run_without_the_ratios_still_gives_a_well_formed_chart() {
        let svg = ratios_svg(&[], "empty");
        elements(&svg);
        assert!(svg.contains("target 1.5x"));
    }
}
