//! Toy logits typed by hand (the lesson's 2, 1, 0.1): their text, labels, the lesson's
//! temperature table, and the history the penalties see.

/// The lesson's example z = [2, 1, 0.1], as the toy panel starts.
pub const DEFAULT_TOY: &str = "2, 1, 0.1";

/// The toy logits' row labels, as the lesson writes them: "z₁ = 2", "z₂ = 1", …
pub fn toy_labels(logits: &[f64]) -> Vec<String> {
    const SUB: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    logits
        .iter()
        .enumerate()
        .map(|(i, z)| {
            let n: String = (i + 1)
                .to_string()
                .chars()
                .filter_map(|d| d.to_digit(10).map(|d| SUB[d as usize]))
                .collect();
            format!("z{n} = {z}")
        })
        .collect()
}

/// The lesson's temperature table: softmax(z / T) for T = 0.5, 1 and 2 (section 2: the top
/// token's mass is 0.659 at T = 1, "≈ 0.84" at T = 0.5 — 0.864 exactly — and ≈ 0.50 at T = 2
/// for z = [2, 1, 0.1]).
pub fn toy_temperature_table(logits: &[f64]) -> Vec<(f64, Vec<f64>)> {
    [0.5, 1.0, 2.0]
        .into_iter()
        .map(|t| {
            let z: Vec<f64> = logits.iter().map(|v| v / t).collect();
            (t, decoding_engine::decode::sampling::stages::softmax(&z))
        })
        .collect()
}

/// Parses the toy history: the ids (0-based rows) of tokens "already generated", which the
/// penalties and no-repeat-n-gram see. Empty text is no history.
pub fn parse_toy_history(text: &str, n_logits: usize) -> Result<Vec<u32>, String> {
    text.split([',', ' ', ';', '\n'])
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.trim().parse::<u32>() {
            Ok(id) if (id as usize) < n_logits => Ok(id),
            Ok(id) => Err(format!(
                "row {id} is not one of the {n_logits} logits (0..{n_logits})"
            )),
            Err(_) => Err(format!("{p:?} is not a row number")),
        })
        .collect()
}

/// Most toy logits a user may type.
pub const MAX_TOY_LOGITS: usize = 64;

/// Parses the toy logits text ("2, 1, 0.1").
pub fn parse_toy(text: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for part in text
        .split([',', ' ', ';', '\n'])
        .filter(|p| !p.trim().is_empty())
    {
        match part.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => out.push(v),
            _ => return Err(format!("{part:?} is not a finite number")),
        }
    }
    if out.is_empty() || out.len() > MAX_TOY_LOGITS {
        return Err(format!(
            "type between 1 and {MAX_TOY_LOGITS} logits (got {})",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toy_labels_table_and_history_follow_the_lesson() {
        let z = parse_toy(DEFAULT_TOY).unwrap();
        assert_eq!(toy_labels(&z), ["z₁ = 2", "z₂ = 1", "z₃ = 0.1"]);
        assert_eq!(toy_labels(&[0.0; 12])[11], "z₁₂ = 0");
        // The lesson's figures, computed here from e^(z/T) / Σ e^(z/T).
        let top = |t: f64| {
            let e: Vec<f64> = z.iter().map(|v| (v / t).exp()).collect();
            e[0] / e.iter().sum::<f64>()
        };
        let table = toy_temperature_table(&z);
        for (t, p) in &table {
            assert!((p[0] - top(*t)).abs() < 1e-12, "T = {t}");
        }
        let rounded: Vec<String> = table.iter().map(|(_, p)| format!("{:.3}", p[0])).collect();
        assert_eq!(rounded, ["0.864", "0.659", "0.502"]);
        assert_eq!(parse_toy_history("0, 0 2", 3), Ok(vec![0, 0, 2]));
        assert_eq!(parse_toy_history("", 3), Ok(vec![]));
        assert!(parse_toy_history("3", 3)
            .unwrap_err()
            .contains("not one of the 3 logits"));
        assert!(parse_toy_history("a", 3).is_err());
        assert!(parse_toy("2, 1, abc")
            .unwrap_err()
            .contains("\"abc\" is not a finite number"));
    }

    #[test]
    fn toy_text_parses() {
        assert_eq!(parse_toy("2, 1, 0.1").unwrap(), vec![2.0, 1.0, 0.1]);
        assert!(parse_toy("2, x").is_err());
        assert!(parse_toy("").is_err());
        assert!(parse_toy("inf").is_err());
    }
}
