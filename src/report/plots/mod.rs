//! The HTML report's plots, drawn with plotters' SVG backend: plain data in, SVG text out.
//! Text is left to the page's fonts (plotters estimates label sizes without a font file), so
//! drawing needs no system font and the SVG references nothing outside itself.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::ReportError;

mod ticks;

pub(super) use ticks::count;
use ticks::tick;

/// Size of every plot, pixels: about the page's column, which it is drawn across, so that
/// text keeps the size it is drawn at.
pub(super) const WIDTH: u32 = 1080;
/// Height of every plot, pixels.
pub(super) const HEIGHT: u32 = 400;
/// Size of tick labels, axis titles and legend text, pixels at the plot's size.
pub(super) const TEXT_PX: u32 = 15;
/// Room for the tick labels and the axis title under and left of a chart, pixels.
const X_LABELS: u32 = 52;
const Y_LABELS: u32 = 96;
/// The colour of interval whiskers and nothing else, so they can be told apart.
pub(super) const WHISKER: RGBColor = RGBColor(34, 34, 34);
/// Colour-blind-safe series colours (Okabe–Ito), by target.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
];
/// The lowest and highest percentile on latency plots.
const PERCENTILE_RANGE: (f64, f64) = (50.0, 99.99);
/// Room right of the last percentile so that its label is drawn.
const RIGHT_MARGIN_NINES: f64 = 0.05;

/// The colour of the `index`-th target.
pub(super) fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// A drawn plot.
pub(super) struct Plot {
    pub svg: String,
}

/// One bar: a mean with its 95 % interval when there is one.
pub(super) struct Bar {
    pub label: String,
    pub mean: f64,
    pub interval: Option<(f64, f64)>,
    pub color: usize,
}

/// One line of a line plot.
pub(super) struct Curve {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub color: usize,
}

/// One stacked bar: the first part at the bottom.
pub(super) struct Stack {
    pub label: String,
    pub parts: Vec<f64>,
}

type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Runs `draw` on a white canvas of the plot size and returns the SVG text.
fn svg(title: &str, draw: impl FnOnce(&Canvas<'_>) -> Drawn) -> Result<Plot, ReportError> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, HEIGHT)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(Box::from)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(Box::from));
        drawn.map_err(|e| ReportError::Plot {
            plot: title.to_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(Plot { svg: text })
}

/// The x positions of percentiles: log10(1 / (1 − p)), so p90, p99 and p99.9 are evenly
/// apart.
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

/// Percentiles from p50 to p99.99, evenly spaced in nines: where latency curves are read.
pub(super) fn percentile_grid() -> Vec<f64> {
    let (lo, hi) = (nines(PERCENTILE_RANGE.0), nines(PERCENTILE_RANGE.1));
    const STEPS: u32 = 72;
    (0..=STEPS)
        .map(|i| {
            let x = lo + (hi - lo) * f64::from(i) / f64::from(STEPS);
            100.0 * (1.0 - 10f64.powf(-x))
        })
        .collect()
}

/// `99.9` for x = 3: the percentile at a position, without trailing zeros.
fn percentile_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    let text = format!("{p:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("p{text}")
}

/// The x range of `n` categories centred on 0, 1, …, n − 1.
fn categories(n: usize) -> std::ops::Range<f64> {
    -0.5..(n.max(1) as f64 - 0.5)
}

/// The label of the category at `x`; none between categories.
fn category_label(labels: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).cloned().unwrap_or_default()
}

/// A chart on `area` with the margin and the room for labels every plot has.
fn builder<'a, 'b, 'c>(area: &'a Canvas<'c>) -> ChartBuilder<'a, 'b, SVGBackend<'c>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(12)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS);
    builder
}

/// Half the width of a bar, in categories.
const HALF_BAR: f64 = 0.32;

/// Bars of means with interval whiskers, one per label.
pub(super) fn throughput(title: &str, y_desc: &str, bars: &[Bar]) -> Result<Plot, ReportError> {
    let top = bars
        .iter()
        .map(|b| b.interval.map_or(b.mean, |(_, hi)| hi))
        .fold(0.0_f64, f64::max)
        .max(1.0)
        * 1.15;
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    svg(title, |root| {
        let mut chart = builder(root).build_cartesian_2d(categories(bars.len()), 0.0..top)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .disable_x_mesh()
            .x_labels(bars.len())
            .x_label_formatter(&|x| category_label(&labels, *x))
            .y_label_formatter(&|y| tick(*y))
            .y_desc(y_desc)
            .draw()?;
        chart.draw_series(bars.iter().zip(0..).map(|(b, i)| {
            let x = f64::from(i);
            Rectangle::new(
                [(x - HALF_BAR, 0.0), (x + HALF_BAR, b.mean)],
                color(b.color).mix(0.75).filled(),
            )
        }))?;
        chart.draw_series(bars.iter().zip(0..).filter_map(|(b, i)| {
            let (lo, hi) = b.interval?;
            Some(ErrorBar::new_vertical(
                f64::from(i),
                lo,
                b.mean,
                hi,
                WHISKER.stroke_width(2),
                12,
            ))
        }))?;
        Ok(())
    })
}

/// Width of the legend strip right of a chart, pixels: a legend there never hides a line.
const LEGEND_WIDTH: u32 = 230;

/// How a legend entry shows its series.
enum Swatch {
    Line,
    Block,
}

/// Splits the canvas into the chart's area and a legend strip, and draws the legend there.
fn with_legend<'a>(
    root: &Canvas<'a>,
    entries: &[(String, RGBColor)],
    swatch: Swatch,
) -> Result<Canvas<'a>, Box<dyn std::error::Error>> {
    let (chart, strip) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    for ((label, c), i) in entries.iter().zip(0..) {
        let y = 28 + 24 * i;
        match swatch {
            Swatch::Line => {
                strip.draw(&PathElement::new(vec![(4, y), (24, y)], c.stroke_width(2)))?
            }
            Swatch::Block => strip.draw(&Rectangle::new([(8, y - 6), (20, y + 6)], c.filled()))?,
        }
        strip.draw(&Text::new(
            label.as_str(),
            (30, y - 6),
            ("sans-serif", TEXT_PX).into_font(),
        ))?;
    }
    Ok(chart)
}

/// Draws `curves` as lines.
fn lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    curves: &[Curve],
) -> Drawn
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for curve in curves {
        chart.draw_series(LineSeries::new(
            curve.points.iter().copied(),
            color(curve.color).stroke_width(2),
        ))?;
    }
    Ok(())
}

/// The legend entries of `curves`.
fn entries(curves: &[Curve]) -> Vec<(String, RGBColor)> {
    curves
        .iter()
        .map(|c| (c.label.clone(), color(c.color)))
        .collect()
}

/// A log axis holding `values`, in whole decades so that it is labelled at powers of ten and
/// a few steps between; at least one decade, from 1 up.
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::MAX, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let lo = 10f64.powf(lo.max(1.0).log10().floor());
    let hi = 10f64.powf(hi.max(lo * 10.0).log10().ceil());
    (lo, hi)
}

/// Latency against percentile, from p50 to the highest percentile of any curve (at most
/// p99.99), latency on a log scale. Points are (percentile, µs).
pub(super) fn latency_percentiles(title: &str, curves: &[Curve]) -> Result<Plot, ReportError> {
    let (lo, hi) = decades(curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)));
    let curves: Vec<Curve> = curves
        .iter()
        .map(|c| Curve {
            label: c.label.clone(),
            points: c.points.iter().map(|&(p, v)| (nines(p), v)).collect(),
            color: c.color,
        })
        .collect();
    // The axis ends where the curve with the most samples does, at least at p90.
    let right = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        + RIGHT_MARGIN_NINES;
    svg(title, |root| {
        let area = with_legend(root, &entries(&curves), Swatch::Line)?;
        let mut chart = builder(&area)
            .build_cartesian_2d(nines(PERCENTILE_RANGE.0)..right, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .x_labels(5)
            .x_label_formatter(&|x| percentile_label(*x))
            .y_labels(6)
            .y_label_formatter(&|y| tick(*y))
            .x_desc("percentile, from p50 at the left edge")
            .y_desc("latency µs (log scale)")
            .draw()?;
        lines(&mut chart, &curves)
    })
}

/// The colour of a goal line.
pub(super) const GOAL: RGBColor = RGBColor(204, 0, 0);

/// Latency against achieved throughput, one line per sweep, latency on a log scale, with the
/// goal's bound as a dashed line. Points are (ops/s, µs).
pub(super) fn knee(
    title: &str,
    y_desc: &str,
    curves: &[Curve],
    bound_us: Option<f64>,
) -> Result<Plot, ReportError> {
    let points = || curves.iter().flat_map(|c| c.points.iter());
    let right = points().map(|p| p.0).fold(1.0_f64, f64::max) * 1.1;
    let (lo, hi) = decades(points().map(|p| p.1).chain(bound_us));
    svg(title, |root| {
        let area = with_legend(root, &entries(curves), Swatch::Line)?;
        let mut chart = builder(&area).build_cartesian_2d(0.0..right, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .y_labels(6)
            .y_label_formatter(&|y| tick(*y))
            .x_label_formatter(&|x| tick(*x))
            .x_desc("achieved operations per second")
            .y_desc(y_desc)
            .draw()?;
        if let Some(bound) = bound_us {
            chart.draw_series(DashedLineSeries::new(
                [(0.0, bound), (right, bound)],
                6,
                4,
                GOAL.stroke_width(1),
            ))?;
        }
        lines(&mut chart, curves)?;
        for curve in curves {
            chart.draw_series(
                curve
                    .points
                    .iter()
                    .map(|&p| Circle::new(p, 3, color(curve.color).filled())),
            )?;
        }
        Ok(())
    })
}

/// The fill of the warm-up's seconds in per-second plots.
pub(super) const WARMUP_SHADE: RGBColor = RGBColor(225, 225, 225);

/// Completions per second over the measured window, after the warm-up's seconds at negative
/// times (shaded). Points are (second, completions).
pub(super) fn per_second(title: &str, curves: &[Curve]) -> Result<Plot, ReportError> {
    seconds(title, "completions per second", curves)
}

/// Each second's mean latency over the measured window. Points are (second, µs).
pub(super) fn latency_over_time(title: &str, curves: &[Curve]) -> Result<Plot, ReportError> {
    seconds(title, "mean latency µs", curves)
}

/// A figure per second of the measured window, from 0 up, with the warm-up's seconds at
/// negative times shaded.
fn seconds(title: &str, y_desc: &str, curves: &[Curve]) -> Result<Plot, ReportError> {
    let left = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold(0.0_f64, f64::min)
        .floor();
    let right = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        .ceil();
    let top = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .fold(1.0_f64, f64::max)
        * 1.25;
    svg(title, |root| {
        let area = with_legend(root, &entries(curves), Swatch::Line)?;
        let mut chart = builder(&area).build_cartesian_2d(left..right, 0.0..top)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .x_label_formatter(&|x| tick(*x))
            .y_label_formatter(&|y| tick(*y))
            .x_desc("second of the measured phase (warm-up shaded, before 0)")
            .y_desc(y_desc)
            .draw()?;
        if left < 0.0 {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(left, 0.0), (0.0, top)],
                WARMUP_SHADE.filled(),
            )))?;
        }
        lines(&mut chart, curves)
    })
}

/// `+25%`, `−25%`: a threshold line's label.
pub(super) fn signed_percent(d: f64) -> String {
    let sign = if d < 0.0 { '−' } else { '+' };
    format!("{sign}{}%", tick(d.abs()))
}

/// The colour of a noise canary's threshold lines.
pub(super) const THRESHOLD: RGBColor = RGBColor(110, 110, 110);

/// Noise canary figures against the cell's place in the run, each as a percentage of its
/// median over the run, with the deviation threshold (percent) drawn both ways when it is
/// known. Points are (cell, percent).
pub(super) fn canary_drift(
    title: &str,
    curves: &[Curve],
    threshold_percent: Option<f64>,
) -> Result<Plot, ReportError> {
    let bounds: Vec<f64> = threshold_percent
        .map(|t| vec![100.0 - t, 100.0 + t])
        .unwrap_or_default();
    let right = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        + 1.0;
    let (lo, hi) = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .chain(bounds.iter().copied())
        .fold((100.0_f64, 100.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = ((lo - 5.0).max(0.0), hi + 5.0);
    svg(title, |root| {
        let area = with_legend(root, &entries(curves), Swatch::Line)?;
        let mut chart = builder(&area).build_cartesian_2d(0.0..right, lo..hi)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .x_label_formatter(&|x| tick(*x))
            .y_label_formatter(&|y| tick(*y))
            .x_desc("cell, in the order the run measured them")
            .y_desc("% of the run's median")
            .draw()?;
        for &bound in &bounds {
            chart.draw_series(DashedLineSeries::new(
                [(0.0, bound), (right, bound)],
                8,
                4,
                THRESHOLD.stroke_width(2),
            ))?;
            chart.draw_series(std::iter::once(Text::new(
                signed_percent(bound - 100.0),
                (right - 0.05 * right, bound),
                ("sans-serif", TEXT_PX).into_font(),
            )))?;
        }
        lines(&mut chart, curves)
    })
}

/// Stacked bars of server CPU µs per operation: the first part (the primary) at the bottom,
/// the others above it, so a bar's height is the total; `legend` names the two kinds.
pub(super) fn cpu_per_member(
    title: &str,
    legend: [&str; 2],
    stacks: &[Stack],
) -> Result<Plot, ReportError> {
    let top = stacks
        .iter()
        .map(|s| s.parts.iter().sum::<f64>())
        .fold(1.0_f64, f64::max)
        * 1.2;
    let labels: Vec<String> = stacks.iter().map(|s| s.label.clone()).collect();
    let roles = [RGBColor(0, 90, 140), RGBColor(120, 170, 210)];
    // (bottom, top) of each part of each stack, with the part's colour.
    let blocks: Vec<(f64, f64, f64, RGBColor)> = stacks
        .iter()
        .zip(0..)
        .flat_map(|(s, i)| {
            let mut base = 0.0;
            s.parts.iter().enumerate().map(move |(k, &p)| {
                let block = (f64::from(i), base, base + p, roles[usize::from(k > 0)]);
                base += p;
                block
            })
        })
        .collect();
    svg(title, |root| {
        let names = [
            (legend[0].to_owned(), roles[0]),
            (legend[1].to_owned(), roles[1]),
        ];
        let area = with_legend(root, &names, Swatch::Block)?;
        let mut chart = builder(&area).build_cartesian_2d(categories(stacks.len()), 0.0..top)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", TEXT_PX))
            .axis_desc_style(("sans-serif", TEXT_PX))
            .disable_x_mesh()
            .x_labels(stacks.len())
            .x_label_formatter(&|x| category_label(&labels, *x))
            .y_label_formatter(&|y| tick(*y))
            .y_desc("server CPU µs per operation")
            .draw()?;
        chart.draw_series(blocks.iter().map(|&(x, from, to, fill)| {
            Rectangle::new([(x - HALF_BAR, from), (x + HALF_BAR, to)], fill.filled())
        }))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests;
