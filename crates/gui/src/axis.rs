//! Latency axes of the window's plots: the unit an axis is drawn in (µs, ms or s,
//! switching as the values grow, named in the axis label) and the ticks of a log10(µs)
//! axis as plain numbers in that unit. Only unit conversion happens here.

use egui_plot::{GridInput, GridMark};

/// The time unit of a latency axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyUnit {
    /// Microseconds.
    Micros,
    /// Milliseconds.
    Millis,
    /// Seconds.
    Seconds,
}

impl LatencyUnit {
    /// The unit for an axis whose largest value is `max_us` µs: µs below 1 ms, ms below
    /// 1 s, s from there (µs when nothing valid is plotted), so tick numbers stay short.
    pub fn for_max_us(max_us: f64) -> Self {
        if !max_us.is_finite() || max_us < 1e3 {
            LatencyUnit::Micros
        } else if max_us < 1e6 {
            LatencyUnit::Millis
        } else {
            LatencyUnit::Seconds
        }
    }

    /// [`LatencyUnit::for_max_us`] of the largest finite value of `values_us`.
    pub fn for_values_us(values_us: impl IntoIterator<Item = f64>) -> Self {
        let max = values_us
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        Self::for_max_us(max)
    }

    /// The unit's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            LatencyUnit::Micros => "µs",
            LatencyUnit::Millis => "ms",
            LatencyUnit::Seconds => "s",
        }
    }

    /// Microseconds in one of this unit.
    pub fn micros(self) -> f64 {
        match self {
            LatencyUnit::Micros => 1.0,
            LatencyUnit::Millis => 1e3,
            LatencyUnit::Seconds => 1e6,
        }
    }

    /// `value_us` in this unit.
    pub fn from_us(self, value_us: f64) -> f64 {
        value_us / self.micros()
    }

    /// The axis label: what the axis measures and this unit, "sync latency (ms)".
    pub fn axis_label(self, what: &str) -> String {
        format!("{what} ({})", self.symbol())
    }

    /// The label of a tick at `log_us` (log10 of µs) on a log axis in this unit: "0.5",
    /// "20", "100".
    pub fn log_tick(self, log_us: f64) -> String {
        tick_number(self.from_us(10f64.powf(log_us)))
    }
}

/// `x` with two significant digits at most and no trailing zeros: "20", "0.05", "2.5",
/// "150" (a 1-2-5 tick needs no more).
pub fn short_number(x: f64) -> String {
    significant(x, 2)
}

/// A tick's value with up to 4 significant digits and no trailing zeros: "20", "0.05",
/// "2.42" (a narrow axis's marks, [`narrow_log_marks`]), the float noise of `10^log10(x)`
/// rounded away.
fn tick_number(x: f64) -> String {
    significant(x, 4)
}

/// `x` with at most `digits` significant digits, trailing zeros (and a bare point) dropped.
fn significant(x: f64, digits: i32) -> String {
    if !x.is_finite() {
        return String::new();
    }
    if x == 0.0 {
        return "0".into();
    }
    let decimals =
        (f64::from(digits - 1) - (x.abs().log10() + 1e-9).floor()).clamp(0.0, 12.0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Marks of a log axis narrower than 0.3 decade, where whole digits leave one mark or none
/// (2.1 to 2.9 ms has none): round values 1, 2 or 5 × 10ⁿ apart in the values themselves,
/// 2 to 4 of them in view, each with its true gap to its neighbours as `step_size`.
fn narrow_log_marks(lo: f64, hi: f64) -> Vec<GridMark> {
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    // A hair under a quarter of the range: float noise must not turn 200 into 500.
    let raw = (b - a) / 4.0 * 0.999;
    if !(raw > 0.0 && raw.is_finite()) {
        return Vec::new();
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|k| k * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let (first, last) = ((a / step).floor() as i64, (b / step).ceil() as i64);
    let values: Vec<f64> = (first - 1..=last + 1)
        .map(|i| i as f64 * step)
        .filter(|v| *v > 0.0)
        .map(f64::log10)
        .collect();
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| (lo..=hi).contains(*v))
        .map(|(i, &value)| {
            let before = i
                .checked_sub(1)
                .map_or(f64::INFINITY, |j| value - values[j]);
            let after = values.get(i + 1).map_or(f64::INFINITY, |n| n - value);
            GridMark {
                value,
                step_size: before.min(after),
            }
        })
        .collect()
}

/// Grid marks of a log10 axis at 1, 2 and 5 × 10ⁿ (every digit when zoomed in), each
/// with its true distance to the nearest neighbouring mark as `step_size` (1 for the
/// powers of ten, which always get a label): egui_plot paints a tick label only when its
/// step is at least 20 points tall, so labels that would overlap are left out rather
/// than drawn over each other.
pub fn log_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 30.0 {
        return Vec::new();
    }
    if hi - lo < 0.3 {
        return narrow_log_marks(lo, hi);
    }
    let steps: &[f64] = match hi - lo {
        span if span > 5.0 => &[1.0],
        span if span > 0.8 => &[1.0, 2.0, 5.0],
        _ => &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    };
    let mut values = Vec::new();
    for decade in (lo.floor() as i32 - 1)..=(hi.ceil() as i32 + 1) {
        values.extend(steps.iter().map(|k| decade as f64 + k.log10()));
    }
    let mut marks = Vec::new();
    for (i, &value) in values.iter().enumerate() {
        if !(lo..=hi).contains(&value) {
            continue;
        }
        let power_of_ten = (value - value.round()).abs() < 1e-9;
        let step_size = if power_of_ten {
            1.0
        } else {
            // Neighbours exist: the list runs a decade past both ends.
            (value - values[i - 1]).min(values[i + 1] - value)
        };
        marks.push(GridMark { value, step_size });
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_grows_with_the_values() {
        assert_eq!(LatencyUnit::for_max_us(850.0), LatencyUnit::Micros);
        assert_eq!(LatencyUnit::for_max_us(28_560.0), LatencyUnit::Millis);
        assert_eq!(LatencyUnit::for_max_us(999_999.0), LatencyUnit::Millis);
        assert_eq!(LatencyUnit::for_max_us(1.5e6), LatencyUnit::Seconds);
        assert_eq!(LatencyUnit::for_max_us(f64::NAN), LatencyUnit::Micros);
        assert_eq!(
            LatencyUnit::for_values_us([4_000.0, f64::INFINITY, 28_000.0]),
            LatencyUnit::Millis
        );
        assert_eq!(
            LatencyUnit::for_values_us(std::iter::empty()),
            LatencyUnit::Micros
        );
    }

    #[test]
    fn axis_labels_name_the_measure_and_the_unit() {
        let ms = LatencyUnit::for_max_us(28_000.0);
        assert_eq!(ms.axis_label("latency"), "latency (ms)");
        assert_eq!(LatencyUnit::Seconds.axis_label("sync p99"), "sync p99 (s)");
        assert_eq!(
            LatencyUnit::Micros.axis_label("sync latency"),
            "sync latency (µs)"
        );
    }

    #[test]
    fn log_ticks_above_20_ms_read_as_short_numbers_in_the_axis_unit() {
        let ms = LatencyUnit::Millis;
        // 20 ms, 50 ms, 100 ms, 200 ms as log10(µs).
        let tick = |us: f64| ms.log_tick(us.log10());
        assert_eq!(tick(20_000.0), "20");
        assert_eq!(tick(50_000.0), "50");
        assert_eq!(tick(100_000.0), "100");
        assert_eq!(tick(200_000.0), "200");
        assert_eq!(tick(500.0), "0.5");
        assert_eq!(tick(50.0), "0.05");
        assert_eq!(LatencyUnit::Seconds.log_tick(2e6f64.log10()), "2");
        assert_eq!(LatencyUnit::Micros.log_tick(0.5f64.log10()), "0.5");
    }

    #[test]
    fn short_numbers_keep_two_significant_digits() {
        assert_eq!(short_number(2.5), "2.5");
        assert_eq!(short_number(150.0), "150");
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(1.0), "1");
        assert_eq!(short_number(f64::NAN), "");
    }

    fn marks(lo: f64, hi: f64) -> Vec<GridMark> {
        log_marks(GridInput {
            bounds: (lo, hi),
            base_step_size: 0.01,
        })
    }

    #[test]
    fn a_4_to_30_ms_axis_gets_5_10_and_20_ms_marks() {
        let ms = LatencyUnit::Millis;
        let got: Vec<String> = marks(3.6, 4.5)
            .iter()
            .map(|m| ms.log_tick(m.value))
            .collect();
        assert_eq!(got, ["5", "10", "20"]);
    }

    #[test]
    fn a_narrow_axis_gets_round_marks_between_the_digits() {
        // 2.1 to 2.9 ms: no whole digit inside; 2.2, 2.4, 2.6, 2.8 ms.
        let ms = LatencyUnit::Millis;
        let got: Vec<String> = marks(2100f64.log10(), 2900f64.log10())
            .iter()
            .map(|m| ms.log_tick(m.value))
            .collect();
        assert_eq!(got, ["2.2", "2.4", "2.6", "2.8"]);
        // 241.2 to 242.8 µs: four significant digits are what tells them apart.
        let us = LatencyUnit::Micros;
        let got: Vec<String> = marks(241.2f64.log10(), 242.8f64.log10())
            .iter()
            .map(|m| us.log_tick(m.value))
            .collect();
        assert_eq!(got, ["241.5", "242", "242.5"]);
        assert!(marks(3.0, 3.1).iter().all(|g| g.step_size > 0.0));
    }

    #[test]
    fn mark_steps_are_the_true_gaps_so_crowded_labels_are_dropped() {
        // 25 to 120 ms: every digit; 8 and 9 (0.05 decade apart) carry that gap, not a
        // constant that made egui_plot paint their labels over each other.
        let m = marks(4.4, 5.08);
        let step_of = |ms: f64| {
            let v = (ms * 1e3).log10();
            m.iter()
                .find(|g| (g.value - v).abs() < 1e-9)
                .map(|g| g.step_size)
                .unwrap()
        };
        assert!((step_of(90.0) - (10f64 / 9.0).log10()).abs() < 1e-9);
        assert!((step_of(80.0) - (9f64 / 8.0).log10()).abs() < 1e-9);
        assert_eq!(step_of(100.0), 1.0);
        assert!((step_of(30.0) - (4f64 / 3.0).log10()).abs() < 1e-9);
        assert!(m.iter().all(|g| g.step_size > 0.0));
    }
}
