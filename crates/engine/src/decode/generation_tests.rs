//! Loop detection.

use super::*;

#[test]
fn loops_are_detected() {
    let found = |ids: &[u32]| detect_loop(ids, 3).map(|l| (l.period, l.repeats, l.start));
    assert_eq!(found(&[1, 2, 3, 4, 5]), None);
    assert_eq!(found(&[9, 5, 6, 7, 5, 6, 7, 5, 6, 7]), Some((3, 3, 1)));
    assert_eq!(found(&[1, 7, 7, 7]), None);
    assert_eq!(found(&[1, 7, 7, 7, 7, 7]), Some((1, 5, 1)));
    assert_eq!(found(&[4, 2, 4, 2, 4, 2, 4, 2]), Some((2, 4, 0)));
    // The loop stays flagged after the text moves on, while it is in the window (the
    // flag once vanished one token later with the same repeats on screen)…
    let mut ids = vec![9, 5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 7];
    ids.extend([11, 12]);
    assert_eq!(found(&ids), Some((3, 4, 1)));
    // …and goes once it has left the window.
    ids.extend((100..100 + LOOP_WINDOW as u32).collect::<Vec<_>>());
    assert_eq!(found(&ids), None);
}
