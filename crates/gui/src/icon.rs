//! The window icon: `assets/fsynclab.png`, rendered from `assets/fsynclab.svg` (the icon
//! the desktop entry names) and compiled in, so the window has it wherever the binary is.

/// The icon PNG as committed (256 × 256, rendered with
/// `rsvg-convert -w 256 -h 256 assets/fsynclab.svg -o assets/fsynclab.png`).
pub const ICON_PNG: &[u8] = include_bytes!("../../../assets/fsynclab.png");

/// The window icon as eframe takes it (RGBA pixels), or why the PNG does not decode.
pub fn window_icon() -> Result<egui::IconData, String> {
    let image = image::load_from_memory_with_format(ICON_PNG, image::ImageFormat::Png)
        .map_err(|e| format!("the window icon does not decode: {e}"))?
        .into_rgba8();
    let (width, height) = image.dimensions();
    Ok(egui::IconData {
        rgba: image.into_raw(),
        width,
        height,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_icon_decodes_square_with_the_svgs_colours() {
        let icon = window_icon().expect("decodes");
        assert_eq!((icon.width, icon.height), (256, 256));
        assert_eq!(icon.rgba.len(), 256 * 256 * 4);
        let pixel = |x: usize, y: usize| {
            let i = (y * 256 + x) * 4;
            [
                icon.rgba[i],
                icon.rgba[i + 1],
                icon.rgba[i + 2],
                icon.rgba[i + 3],
            ]
        };
        // Outside the rounded square: transparent; inside, near the top-left corner: the
        // svg's background #1f3b57; the tallest bar (x 56..66, y 24..84 of 128): #f2b134.
        assert_eq!(pixel(1, 1)[3], 0);
        assert_eq!(pixel(40, 128), [0x1f, 0x3b, 0x57, 0xff]);
        assert_eq!(pixel(122, 100), [0xf2, 0xb1, 0x34, 0xff]);
    }
}
