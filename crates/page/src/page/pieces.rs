//! A token's piece as the page shows it: whitespace visible one way, quoted, cut short.

/// How a token piece is shown everywhere on the page: whitespace made visible (space ␣,
/// newline ⏎, tab ⇥), other control characters as \u{…}, at most `max_chars` characters
/// (then …), and in quotes when `quoted` (in lists, where a bare piece reads as prose).
pub fn piece_text(piece: &str, quoted: bool, max_chars: Option<usize>) -> String {
    let mut out = String::new();
    for c in piece.chars() {
        match c {
            ' ' => out.push('␣'),
            '\n' => out.push('⏎'),
            '\t' => out.push('⇥'),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    if let Some(max) = max_chars {
        if out.chars().count() > max {
            out = out.chars().take(max.saturating_sub(1)).collect::<String>() + "…";
        }
    }
    if quoted {
        format!("\"{out}\"")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_show_their_whitespace_one_way() {
        assert_eq!(piece_text(" the", false, None), "␣the");
        assert_eq!(piece_text(",", true, None), "\",\"");
        assert_eq!(piece_text("a\nb\t", false, None), "a⏎b⇥");
        assert_eq!(piece_text("\u{7}", false, None), "\\u{7}");
        assert_eq!(piece_text(" Once upon", false, Some(5)), "␣Onc…");
        assert_eq!(piece_text("abcde", false, Some(5)), "abcde");
    }
}
