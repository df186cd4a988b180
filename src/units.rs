//! Quantities as people read them: bytes in binary units, durations in the unit that keeps a few
//! significant digits, rates, and counts with thousands separators. One place, so that the same
//! number reads the same in every panel, message and export.

/// `bytes` in the largest binary unit that keeps a number of at least 1.
pub fn format_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30)),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        // The unit symbol, not the English word: the same in both languages.
        b => format!("{b} B"),
    }
}

/// Parses a size such as `64MiB`, `1.5 GiB`, `512 KB` or `1000000` (bytes).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * scale;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as u64)
}

/// Any number, in at most a dozen characters: four significant digits from 0.001 to a billion,
/// and `1.23e-300`-style outside (where plain digits would run to hundreds of characters).
pub fn readable(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() || a == 0.0 {
        return x.to_string();
    }
    if !(1e-3..1e9).contains(&a) {
        return format!("{x:.2e}");
    }
    // Four significant digits, without trailing zeros.
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Beyond `limit` seconds (days), a duration in seconds in scientific notation, so that an
/// absurd figure still prints in a dozen characters.
fn absurd_seconds(s: f64, limit: f64) -> Option<String> {
    (s.is_nan() || s >= limit).then(|| format!("{} s", readable(s)))
}

/// A duration in readable units: ns, µs, ms or s.
pub fn format_ns(ns: f64) -> String {
    if let Some(text) = absurd_seconds(ns / 1e9, 1e6) {
        return text;
    }
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A step time given in milliseconds: `1.25 ms`, or `250.0 µs` below a millisecond.
pub fn format_ms(ms: f64) -> String {
    // Up to 10^8 ms (about a day) in milliseconds, as the other step times read.
    if let Some(text) = absurd_seconds(ms / 1e3, 1e5) {
        return text;
    }
    if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.1} µs", ms * 1e3)
    }
}

/// Joules with the prefix that fits: `12.30 mJ`, `4.56 J`, `7.89 kJ`.
pub fn format_joules(j: f64) -> String {
    match j.abs() {
        a if !a.is_finite() || a >= 1e6 => format!("{} kJ", readable(j / 1e3)),
        a if a >= 1e3 => format!("{:.2} kJ", j / 1e3),
        a if a >= 1.0 => format!("{j:.2} J"),
        a if a >= 1e-3 => format!("{:.2} mJ", j * 1e3),
        _ => format!("{:.2} µJ", j * 1e6),
    }
}

/// A rate per second with a k or M prefix: `12.3 k`, `1.25 M`.
pub fn format_rate(per_s: f64) -> String {
    if per_s.is_nan() || per_s >= 1e9 {
        readable(per_s)
    } else if per_s >= 1e6 {
        format!("{:.2} M", per_s / 1e6)
    } else if per_s >= 1e3 {
        format!("{:.1} k", per_s / 1e3)
    } else {
        format!("{per_s:.0}")
    }
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_bytes("64MiB"), Some(64 << 20));
        assert_eq!(parse_bytes("1.5 GiB"), Some(3 << 29));
        assert_eq!(parse_bytes("512kb"), Some(512 << 10));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("12 parsecs"), None);
        assert_eq!(parse_bytes("0"), None);
    }

    #[test]
    fn quantities_read_in_the_unit_that_fits() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(4096), "4.0 KiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_ns(12_500.0), "12.5 µs");
        assert_eq!(format_ns(2.5e9), "2.50 s");
        assert_eq!(format_ms(0.25), "250.0 µs");
        assert_eq!(format_ms(12.0), "12.00 ms");
        assert_eq!(format_rate(12_345.0), "12.3 k");
        assert_eq!(grouped(101_770), "101,770");
        assert_eq!(format_joules(0.0123), "12.30 mJ");
        assert_eq!(format_joules(4.5), "4.50 J");
        assert_eq!(format_joules(7890.0), "7.89 kJ");
        assert_eq!(format_joules(2e-5), "20.00 µJ");
    }

    #[test]
    fn numbers_of_any_size_print_in_a_dozen_characters() {
        assert_eq!(readable(0.9), "0.9");
        assert_eq!(readable(0.012_345), "0.01235");
        assert_eq!(readable(1234.5678), "1235");
        assert_eq!(readable(1e-300), "1.00e-300");
        assert_eq!(readable(-2.5e300), "-2.50e300");
        assert_eq!(readable(0.0), "0");
        assert_eq!(format_ms(1e300), "1.00e297 s");
        assert_eq!(format_ns(f64::INFINITY), "inf s");
        assert_eq!(format_rate(1e300), "1.00e300");
        for x in [
            1e-308,
            3e-5,
            0.5,
            7.0,
            1e8,
            1e308,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let texts = [
                readable(x),
                format_ms(x),
                format_ns(x),
                format_rate(x),
                format_joules(x),
            ];
            for text in texts {
                assert!(text.len() <= 14, "{x}: {text}");
            }
        }
    }
}
