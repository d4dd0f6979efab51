//! The timeline's SVG renders: headless Chromium takes a screenshot of it, and the image
//! is not blank (enough non-white pixels, in several colours).
//!
//! Needs Chromium (`chromium`, `chromium-browser` or `google-chrome` on the PATH);
//! `scripts/timeline-check` installs it (apt package `chromium`) and runs this test.
//! Without it the test says so and passes.
#![cfg(feature = "timeline")]

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::trace::recording_pool;
use common::{fib, watchdog};

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The `width="…" height="…"` of the SVG's root element.
fn svg_size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let start = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let len = svg[start..].find('"').unwrap();
        svg[start..start + len].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

fn screenshot(chromium: &Path, svg: &Path, png: &Path, (width, height): (u32, u32)) {
    let status = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", svg.display()))
        .stderr(std::process::Stdio::null())
        .status()
        .expect("chromium did not start");
    assert!(status.success(), "chromium failed: {status}");
}

#[test]
fn the_svg_renders_to_a_picture_that_is_not_blank() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: Chromium not found on the PATH (scripts/timeline-check installs the \
             apt package `chromium`)"
        );
        return;
    };
    watchdog(120, move || {
        let (pool, timeline) = recording_pool(2);
        for _ in 0..5 {
            pool.install(|| fib(20));
            for _ in 0..100 {
                pool.spawn(|| {
                    std::hint::black_box((0..10_000u64).sum::<u64>());
                });
            }
            pool.wait_idle().unwrap();
        }
        pool.shutdown().unwrap();

        let dir = std::env::temp_dir().join(format!("stealpool-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (svg_path, png_path) = (dir.join("timeline.svg"), dir.join("timeline.png"));
        timeline.save(&svg_path).unwrap();
        let size = svg_size(&std::fs::read_to_string(&svg_path).unwrap());
        screenshot(&chromium, &svg_path, &png_path, size);

        let decoder = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), size);
        let channels = info.color_type.samples();
        assert!(channels >= 3, "{:?}", info.color_type);
        let rgb: Vec<[u8; 3]> = pixels[..info.buffer_size()]
            .chunks(channels)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        let not_white = rgb.iter().filter(|p| **p != [255, 255, 255]).count();
        let colours: HashSet<[u8; 3]> = rgb.iter().copied().collect();
        std::fs::remove_dir_all(&dir).unwrap();
        // Two lanes of 1200 x 22 px, the axis, the legend and text: well over 10%.
        assert!(
            not_white * 10 > rgb.len(),
            "{not_white} of {} pixels are not white",
            rgb.len()
        );
        assert!(colours.len() >= 4, "{} colours", colours.len());
    });
}

/// The files of a real run of the main job (`scripts/timeline-check` runs
/// `examples/compress --timeline` and passes them in `STEALPOOL_CHECK_JSON`,
/// `STEALPOOL_CHECK_SVG`, and the job count of its metrics table in
/// `STEALPOOL_CHECK_JOBS`): the JSON is well formed, balanced, in order, and has exactly
/// the metrics' jobs; the SVG renders. Without the variables the test says so and passes.
#[test]
fn the_main_jobs_timeline_files_check_out() {
    let var = |name| std::env::var_os(name).map(PathBuf::from);
    let (Some(json), Some(svg), Some(jobs)) = (
        var("STEALPOOL_CHECK_JSON"),
        var("STEALPOOL_CHECK_SVG"),
        std::env::var("STEALPOOL_CHECK_JOBS").ok(),
    ) else {
        eprintln!("skipped: no main-job files given (scripts/timeline-check gives them)");
        return;
    };
    let jobs: u64 = jobs.parse().expect("STEALPOOL_CHECK_JOBS: a number");
    assert_eq!(
        common::trace::check_chrome_trace(&std::fs::read(&json).unwrap()),
        jobs
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains(&format!("{jobs} jobs")));
    if let Some(chromium) = chromium() {
        let png = std::env::temp_dir().join(format!("stealpool-main-{}.png", std::process::id()));
        screenshot(&chromium, &svg, &png, svg_size(&text));
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        std::fs::remove_file(png).unwrap();
    }
}
