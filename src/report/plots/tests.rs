//! The plots parsed back as SVG: bars, whiskers and percentile positions where they belong.

use resvg::usvg;

use super::*;

/// Filled paths of `color` with their widths, and paths stroked in the whisker colour.
fn shapes(svg: &str, color: RGBColor) -> (Vec<f32>, usize) {
    fn walk(g: &usvg::Group, color: RGBColor, out: &mut (Vec<f32>, usize)) {
        let rgb = |c: &usvg::Color| (c.red, c.green, c.blue);
        for node in g.children() {
            match node {
                usvg::Node::Group(g) => walk(g, color, out),
                usvg::Node::Path(p) => {
                    if let Some(usvg::Paint::Color(c)) = p.fill().map(|f| f.paint())
                        && rgb(c) == (color.0, color.1, color.2)
                    {
                        out.0.push(p.bounding_box().width());
                    }
                    if let Some(usvg::Paint::Color(c)) = p.stroke().map(|s| s.paint())
                        && rgb(c) == (WHISKER.0, WHISKER.1, WHISKER.2)
                    {
                        out.1 += 1;
                    }
                }
                _ => {}
            }
        }
    }
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default()).unwrap();
    let mut out = (Vec::new(), 0);
    walk(tree.root(), color, &mut out);
    out
}

#[test]
fn one_bar_fills_its_segment_and_two_bars_split_the_width() {
    let bar = |label: &str, color: usize, interval| Bar {
        label: label.into(),
        mean: 100.0,
        interval,
        color,
    };
    let one = throughput("one", "ops/s", &[bar("a", 0, Some((90.0, 110.0)))]).unwrap();
    let (widths, whiskers) = shapes(&one.svg, PALETTE[0]);
    assert_eq!((widths.len(), whiskers), (1, 4), "one bar, one whisker");
    let two = throughput("two", "ops/s", &[bar("a", 0, None), bar("b", 1, None)]).unwrap();
    let (two_widths, whiskers) = shapes(&two.svg, PALETTE[0]);
    assert_eq!(
        (two_widths.len(), whiskers),
        (1, 0),
        "no interval, no whisker"
    );
    // No empty segment is left over: two bars each take about half the single bar's room.
    let ratio = two_widths[0] / widths[0];
    assert!((0.45..0.55).contains(&ratio), "{ratio}");
    // Each bar is labelled once, under its centre.
    for label in ["a", "b"] {
        assert_eq!(
            two.svg.matches(&format!(">\n{label}\n</text>")).count(),
            1,
            "{label}"
        );
    }
}

#[test]
fn percentile_positions_put_each_nine_one_apart() {
    assert!((nines(90.0) - 1.0).abs() < 1e-12);
    assert!((nines(99.9) - 3.0).abs() < 1e-9);
    assert_eq!(percentile_label(2.0), "p99");
    assert_eq!(percentile_label(4.0), "p99.99");
    let grid = percentile_grid();
    assert!((grid[0] - 50.0).abs() < 1e-9 && (grid[grid.len() - 1] - 99.99).abs() < 1e-9);
    assert!(grid.windows(2).all(|w| w[0] < w[1]));
}
