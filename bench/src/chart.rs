//! The chart of the comparison: for each workload, each framework's median over raw
//! tokio's, as bars on a log scale around the raw baseline at 1.0 (a bar going up
//! is slower, or more memory, than raw tokio). SVG only, drawn by plotters without
//! fonts of its own: the viewer's browser renders the text.

use std::path::Path;

use plotters::prelude::*;

use crate::compare::Row;
use crate::frameworks::Fw;
use crate::harness::Flavor;

/// One colour per framework, raw tokio's unused (it is the 1.0 line).
fn colour(fw: Fw) -> RGBColor {
    match fw {
        Fw::Raw => RGBColor(0, 0, 0),
        Fw::Tapio => RGBColor(214, 39, 40),
        Fw::Actix => RGBColor(31, 119, 180),
        Fw::Ractor => RGBColor(44, 160, 44),
        Fw::Kameo => RGBColor(255, 127, 14),
        Fw::Xtra => RGBColor(148, 103, 189),
    }
}

pub fn ratios(rows: &[Row], flavor: Flavor, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.flavor == flavor).collect();
    let peers = &Fw::ALL[1..];
    let ratios: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|r| peers.iter().map(|fw| r.ratio(*fw)).collect())
        .collect();
    let all = ratios.iter().flatten().flatten().copied();
    let (low, high) = all.fold((1.0_f64, 1.0_f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    // Headroom above the tallest bar for the legend.
    let (low, high) = (low.min(0.5) * 0.8, high.max(2.0) * 4.0);

    let width = 120 + 90 * rows.len() as u32;
    let root = SVGBackend::new(path, (width.max(600), 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Over raw tokio (time or memory; lower is better), {}",
        flavor.name()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(70)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..rows.len() as f64, (low..high).log_scale())?;
    let names: Vec<&str> = rows.iter().map(|r| r.wl.arg()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 1e-6 {
                names.get(i).map_or_else(String::new, |n| (*n).to_owned())
            } else {
                String::new()
            }
        })
        .light_line_style(TRANSPARENT)
        .y_labels(12)
        .y_desc("ratio to raw tokio (log scale)")
        .y_label_formatter(&|y| format!("{y:.2}x"))
        .draw()?;

    let bar = 0.8 / peers.len() as f64;
    for (k, fw) in peers.iter().enumerate() {
        let style = colour(*fw).filled();
        let bars = ratios.iter().enumerate().filter_map(|(i, r)| {
            let ratio = r[k]?;
            let x0 = i as f64 + 0.1 + k as f64 * bar;
            Some(Rectangle::new([(x0, 1.0), (x0 + bar * 0.9, ratio)], style))
        });
        chart
            .draw_series(bars)?
            .label(fw.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], style));
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, 1.0), (rows.len() as f64, 1.0)],
        BLACK.stroke_width(1),
    )))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
