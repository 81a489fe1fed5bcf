//! Text on the PNG page, drawn glyph by glyph with each glyph's left side bearing.
//!
//! plotters 0.3.7's ab_glyph text drawing puts every glyph's ink at the start of its
//! advance, ignoring the bearing: a monospace `.` (centred in its cell) sat against the
//! digit before it and left a gap after ("2. 04", "p99. 9"), and two hyphens in the sans
//! font drew as one long dash ("--repeat" as "–repeat"). [`GlyphFixed`] wraps a backend
//! and draws text itself with the same fonts, advances, kerning and vertical placement,
//! the bearing added. Everything else goes to the wrapped backend unchanged. (The SVG page
//! keeps text as text: the viewer lays it out.)

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::prelude::DrawingBackend;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

use super::style::{MONO, SANS};

/// A backend whose `draw_text` honours glyph bearings (see the module comment).
pub(super) struct GlyphFixed<B>(pub B);

/// The font bytes registered for `family` (see `style::register_fonts`).
fn font_for(family: &str) -> Option<FontRef<'static>> {
    let bytes = match family {
        SANS => epaint_default_fonts::UBUNTU_LIGHT,
        MONO => epaint_default_fonts::HACK_REGULAR,
        _ => return None,
    };
    FontRef::try_from_slice(bytes).ok()
}

/// The coverage of every pixel of `text` at `size` px: `(x, y, coverage 0..=1)`, relative
/// to the text's origin as plotters places it (x from the first advance, y from
/// `size / 2` above the glyph tops' line).
pub(super) fn glyph_pixels(font: &FontRef<'_>, size: f64, text: &str) -> Vec<(i32, i32, f32)> {
    let scaled = font.as_scaled(size as f32);
    let mut pixels = Vec::new();
    let mut x_advance = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            x_advance += scaled.kern(p, id);
        }
        prev = Some(id);
        // Placed at its exact (sub-pixel) pen position: the outline's pixel bounds then
        // start at the pen plus the glyph's left side bearing.
        let glyph = id.with_scale_and_position(scaled.scale(), ab_glyph::point(x_advance, 0.0));
        if let Some(outline) = scaled.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            let x0 = bounds.min.x as i32;
            let y0 = ((size as f32) / 2.0 + bounds.min.y) as i32;
            outline.draw(|x, y, coverage| pixels.push((x as i32 + x0, y as i32 + y0, coverage)));
        }
        x_advance += scaled.h_advance(id);
    }
    pixels
}

impl<B: DrawingBackend> DrawingBackend for GlyphFixed<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }

    /// plotters' default `draw_text` (anchor, layout box, transform, clipping) with the
    /// glyphs from [`glyph_pixels`].
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let family = style.family();
        let Some(font) = font_for(family.as_str()) else {
            return self.0.draw_text(text, style, pos);
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        for (x, y, coverage) in glyph_pixels(&font, style.size(), text) {
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                self.0.draw_pixel((x, y), color.mix(f64::from(coverage)))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column ranges with ink, left to right (a glyph each, for these strings).
    fn ink_runs(pixels: &[(i32, i32, f32)]) -> Vec<(i32, i32)> {
        let mut columns: Vec<i32> = pixels.iter().filter(|p| p.2 > 0.3).map(|p| p.0).collect();
        columns.sort_unstable();
        columns.dedup();
        let mut runs: Vec<(i32, i32)> = Vec::new();
        for c in columns {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == c => run.1 = c,
                _ => runs.push((c, c)),
            }
        }
        runs
    }

    #[test]
    fn a_monospace_decimal_point_sits_centred_between_its_digits() {
        let font = font_for(MONO).unwrap();
        let runs = ink_runs(&glyph_pixels(&font, 20.0, "0.0"));
        assert_eq!(runs.len(), 3, "{runs:?}");
        let gap_before = runs[1].0 - runs[0].1;
        let gap_after = runs[2].0 - runs[1].1;
        assert!(
            (gap_before - gap_after).abs() <= 1,
            "the '.' is not centred: {gap_before} px before, {gap_after} px after ({runs:?})"
        );
    }

    #[test]
    fn two_hyphens_stay_two() {
        // Ubuntu Light's hyphen leaves about 0.06 em between two: under a pixel at report
        // sizes, so the test looks for the lighter column between the two inks.
        let font = font_for(SANS).unwrap();
        let pixels = glyph_pixels(&font, 20.0, "--");
        let (lo, hi) = pixels.iter().fold((i32::MAX, i32::MIN), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
        let column_ink: Vec<f32> = (lo..=hi)
            .map(|x| {
                pixels
                    .iter()
                    .filter(|p| p.0 == x)
                    .map(|p| p.2)
                    .fold(0.0, f32::max)
            })
            .collect();
        let peak = column_ink.iter().copied().fold(0.0, f32::max);
        let middle = &column_ink[column_ink.len() / 4..column_ink.len() * 3 / 4];
        let valley = middle.iter().copied().fold(f32::MAX, f32::min);
        assert!(
            valley < peak * 0.6,
            "'--' drew as one dash: columns {column_ink:?}"
        );
    }

    #[test]
    fn the_png_backend_draws_text_with_the_bearings() {
        use plotters::prelude::*;
        super::super::style::register_fonts().unwrap();
        let (w, h) = (80u32, 40u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = GlyphFixed(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
            let font = FontDesc::new(FontFamily::Name(MONO), 20.0, FontStyle::Normal);
            root.draw_text("0.0", &font.color(&BLACK), (5, 5)).unwrap();
            root.present().unwrap();
        }
        let mut columns: Vec<i32> = Vec::new();
        for y in 0..h {
            for x in 0..w {
                if buf[((y * w + x) * 3) as usize] < 160 {
                    columns.push(x as i32);
                }
            }
        }
        let pixels: Vec<(i32, i32, f32)> = columns.into_iter().map(|x| (x, 0, 1.0)).collect();
        let runs = ink_runs(&pixels);
        assert_eq!(runs.len(), 3, "{runs:?}");
        let (before, after) = (runs[1].0 - runs[0].1, runs[2].0 - runs[1].1);
        assert!((before - after).abs() <= 1, "{runs:?}");
    }
}
