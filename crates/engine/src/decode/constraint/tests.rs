use super::*;

/// A vocabulary of the 256 single bytes, a few words, and EOS (id 256).
fn vocab() -> ConstraintVocab {
    let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    bytes.push(Vec::new()); // EOS
    for w in [" yes", " no", "yes", "no", "20", "-0", "{\"", "\": "] {
        bytes.push(w.as_bytes().to_vec());
    }
    bytes.push(Vec::new()); // a control token, "<|sep|>"
    let sep = bytes.len() - 1;
    let pieces = bytes
        .iter()
        .enumerate()
        .map(|(i, b)| match i {
            256 => "</s>".to_string(),
            i if i == sep => "<|sep|>".to_string(),
            _ => String::from_utf8_lossy(b).into_owned(),
        })
        .collect();
    let n = bytes.len();
    // The model's logits are 8 longer than the tokenizer (padding, as some models have).
    ConstraintVocab::from_parts(bytes, pieces, 256, n + 8, &[256], native_clock).unwrap()
}

fn id(v: &ConstraintVocab, s: &str) -> u32 {
    (0..v.model_vocab() as u32)
        .find(|&i| v.bytes(i) == s.as_bytes())
        .unwrap()
}

fn spec(text: &str) -> ConstraintSpec {
    ConstraintSpec::parse(text).unwrap().unwrap()
}

fn allowed_texts(c: &mut Constraint, v: &ConstraintVocab) -> Vec<String> {
    let a = c.allowed().unwrap();
    (0..v.model_vocab())
        .filter(|&i| a.allows(i))
        .map(|i| String::from_utf8_lossy(v.bytes(i as u32)).into_owned())
        .collect()
}

#[test]
fn a_spec_reads_its_kind_and_refuses_nonsense_with_the_reason() {
    assert_eq!(ConstraintSpec::parse("none").unwrap(), None);
    assert_eq!(ConstraintSpec::parse("  ").unwrap(), None);
    let s = spec("regex:a:b");
    assert_eq!((s.kind, s.source.as_str()), (ConstraintKind::Regex, "a:b"));
    assert_eq!(s.to_text(), "regex:a:b");
    assert_eq!(spec("gbnf:root ::= \"x\"").kind, ConstraintKind::Grammar);
    assert_eq!(spec("json-schema:{}").kind, ConstraintKind::JsonSchema);
    assert!(matches!(
        ConstraintSpec::parse("yaml:a"),
        Err(ConstraintError::UnknownKind(_))
    ));
    assert!(matches!(
        ConstraintSpec::parse("just text"),
        Err(ConstraintError::UnknownKind(_))
    ));
    assert!(matches!(
        ConstraintSpec::parse("regex:"),
        Err(ConstraintError::Empty { .. })
    ));
    let huge = format!("regex:{}", "a".repeat(MAX_SOURCE_BYTES + 1));
    assert!(matches!(
        ConstraintSpec::parse(&huge),
        Err(ConstraintError::TooLarge { .. })
    ));
}

#[test]
fn syntax_errors_say_where() {
    let v = vocab();
    let e = spec("regex:ab(c").compile(&v).err().unwrap();
    assert!(
        matches!(
            &e,
            ConstraintError::Syntax {
                line: 1,
                column: 3,
                ..
            }
        ),
        "{e}"
    );
    let e = spec("json_schema:{\n  \"type\": \"object\",\n  \"properties\": }")
        .compile(&v)
        .err()
        .unwrap();
    assert!(matches!(&e, ConstraintError::Syntax { line: 3, .. }), "{e}");
    assert!(e.to_string().contains("line 3, column"), "{e}");
    let e = spec("lark:start: \"a\"\nfoo: bar baz ~")
        .compile(&v)
        .err()
        .unwrap();
    assert!(matches!(&e, ConstraintError::Syntax { line: 2, .. }), "{e}");
    let e = spec("json_schema:[1]").compile(&v).err().unwrap();
    assert!(matches!(&e, ConstraintError::Syntax { .. }), "{e}");
}

#[test]
fn the_mask_follows_the_text_and_allows_the_end_only_when_complete() {
    let v = vocab();
    let mut c = spec("regex: (yes|no)").compile(&v).unwrap();
    let first = allowed_texts(&mut c, &v);
    assert!(first.contains(&" yes".to_string()) && first.contains(&" no".to_string()));
    assert!(first.contains(&" ".to_string()));
    assert!(!first.contains(&"yes".to_string()), "{first:?}");
    assert!(!c.allowed().unwrap().end);
    c.advance(id(&v, " ")).unwrap();
    assert_eq!(c.allowed().unwrap().position, "next [ny]");
    c.advance(id(&v, "no")).unwrap();
    let a = c.allowed().unwrap();
    assert!(a.end && a.only_end(&[256]), "{a:?}");
    assert_eq!(a.count, 1);
    // A token it does not allow is refused and changes nothing.
    let mut c = spec("regex: (yes|no)").compile(&v).unwrap();
    let e = c.advance(id(&v, "yes")).unwrap_err();
    assert!(matches!(e, ConstraintError::Rejected { .. }), "{e}");
    assert!(
        c.advance(256).is_err(),
        "the end is refused before the text is complete"
    );
    c.advance(id(&v, " yes")).unwrap();
    c.advance(256).unwrap();
    // Replaying from the start gives the same mask as stepping.
    let mut d = spec("regex: (yes|no)").compile(&v).unwrap();
    d.advance(id(&v, " ")).unwrap();
    let stepped = d.allowed().unwrap().words;
    d.replay(&[id(&v, " ")]).unwrap();
    assert_eq!(d.allowed().unwrap().words, stepped);
    // A clone goes its own way.
    let mut e = d.clone();
    e.advance(id(&v, "no")).unwrap();
    assert!(!d.allowed().unwrap().end && e.allowed().unwrap().end);
}

#[test]
fn a_language_the_vocabulary_cannot_spell_allows_nothing() {
    // No token holds a byte ≥ 0x80 alone but the byte tokens do; a regex over an empty
    // class can never be written.
    let v = vocab();
    let mut c = spec("regex:a[^\\x00-\\x{10FFFF}]").compile(&v).unwrap();
    let a = c.allowed().unwrap();
    assert_eq!((a.count, a.end), (0, false));
}

#[test]
fn a_hostile_constraint_is_refused_or_bounded_within_a_second() {
    let v = vocab();
    // Rules each naming the next: llguidance compiles them recursively, so 1,500 would
    // overflow the stack. Five calls a rule: `root` (5), r0 (10), ... r198 (1,000), and the
    // reference to r199 (line 1 + 1500 - 198, column 9 + 6 + 1) would pass 1,000.
    let chain = |n: usize| -> String {
        let rules: String = (0..n)
            .rev()
            .map(|i| format!("r{i} ::= [^a]* r{} [b-z]+ | \"q\"\n", i + 1))
            .collect();
        format!("root ::= r0\n{rules}r{n} ::= \"x\"\n")
    };
    let e = spec(&format!("grammar:{}", chain(1500)))
        .compile(&v)
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "GBNF grammar syntax error at line 1303, column 16 (rule r198): rules nest too deep for \
         the compiler (each naming the next, in groups)"
    );
    assert!(spec(&format!("grammar:{}", chain(198))).compile(&v).is_ok());
    // Inside 30 parentheses, a rule costs 5 + 3·30 + 5 (a helper rule) = 100: `root` (5)
    // and r0 to r8 (905), then r9, named on r8's line 10 at column 7 + 30 + 1.
    let nested: String = (0..12)
        .map(|i| format!("r{i} ::= {}r{}{}\n", "(".repeat(30), i + 1, ")".repeat(30)))
        .collect();
    let e = spec(&format!("grammar:root ::= r0\n{nested}r12 ::= \"x\"\n"))
        .compile(&v)
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("line 10, column 38 (rule r8)"),
        "{e}"
    );
    // Lark's rules and parentheses bound its depth: 252 rules are 1,260 calls.
    let lark_chain = |n: usize| -> String {
        let rules: String = (0..n)
            .map(|i| format!("r{i}: r{} \"a\"\n", i + 1))
            .collect();
        format!("lark:start: r0\n{rules}r{n}: \"x\"\n")
    };
    let e = spec(&lark_chain(250))
        .compile(&v)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("252 rules and 0 parentheses: deeper than the compiler may go (1260 of 1000)"),
        "{e}"
    );
    assert!(spec(&lark_chain(150)).compile(&v).is_ok());
    // The chain's analysis of runs (`gbnf_lark.rs`) is bounded: compiled within the second.
    let chain = format!("grammar:{}", chain(98));
    for text in [
        chain.as_str(),
        // nested counted repetitions: 10^12 states if unrolled
        "regex:((((a{1000}){1000}){1000}){1000})b",
        "lark:start: x{1000}\nx: y{1000}\ny: \"a\"{1000}",
        "grammar:root ::= x{1000}\nx ::= y{1000}\ny ::= \"a\"{1000}",
        // an ambiguous grammar: every split of the text is a parse
        "lark:start: s\ns: s s | s s s | \"a\" | \"aa\"",
        // the same in GBNF, which the rule tracker (`rules.rs`) parses again
        "grammar:root ::= s\ns ::= s s | s s s | \"a\" | \"aa\"",
    ] {
        let t = std::time::Instant::now();
        // Compiled, or refused; then masks along 30 tokens, or a refusal.
        let mut steps = 0;
        if let Ok(mut c) = spec(text).compile(&v) {
            while steps < 30 && c.allowed().is_ok_and(|a| a.allows(97)) && c.advance(97).is_ok() {
                steps += 1;
            }
        }
        let took = t.elapsed();
        assert!(
            took.as_secs_f64() < 1.0,
            "{text}: {took:?} for {steps} steps"
        );
    }
}

#[test]
fn the_json_path_names_the_field_being_filled() {
    assert_eq!(position::json_path(b""), "$");
    assert_eq!(position::json_path(b"{\"na"), "$.na");
    assert_eq!(position::json_path(b"{\"name\": \"Li"), "$.name");
    assert_eq!(position::json_path(b"{\"name\": \"Li\", "), "$");
    assert_eq!(
        position::json_path(b"{\"pets\": [\"a\", \"b,c\", "),
        "$.pets[2]"
    );
    assert_eq!(position::json_path(b"{\"a\": {\"b\": 1}, \"c\": "), "$.c");
    assert_eq!(position::json_path(b"{\"q\\\"x\": "), "$.q\"x");
}

/// The position after following `text` a byte at a time (from the start).
fn position_after(c: &mut Constraint, text: &str) -> String {
    c.reset().unwrap();
    for b in text.bytes() {
        c.advance(u32::from(b)).unwrap();
    }
    c.allowed().unwrap().position
}

#[test]
fn the_position_names_the_gbnf_rule_being_filled() {
    let v = vocab();
    let g = "grammar:root ::= \" \" name \" and \" name \".\"\nname ::= [A-Z] [a-zé]+\n";
    let mut c = spec(g).compile(&v).unwrap();
    // Before any text, the start rule; in a name, the name; in the literal between, root.
    assert_eq!(position_after(&mut c, ""), "root · next \"␣\"");
    assert_eq!(position_after(&mut c, " L"), "name · next [a-z\\xC3]");
    assert_eq!(position_after(&mut c, " Lily a"), "root · next \"n\"");
    assert_eq!(
        position_after(&mut c, " Lily and T"),
        "name · next [a-z\\xC3]"
    );
    // Half a character (é's first byte) waits for the rest.
    assert_eq!(
        position_after(&mut c, " Lily and R\u{e9}"),
        "name · next [.a-z\\xC3]"
    );
    let mut half = c.clone();
    half.reset().unwrap();
    for b in " Lily and R".bytes().chain([0xC3]) {
        half.advance(u32::from(b)).unwrap();
    }
    assert!(half.allowed().unwrap().position.starts_with("name · next "));
    // Through groups and repetitions (owned by the rule they are written in), and a rule
    // named within a repetition.
    let list =
        "grammar:root ::= item{2,3}\nitem ::= \"- \" word (\" \" word)* \"\\n\"\nword ::= [a-z]+\n";
    let mut c = spec(list).compile(&v).unwrap();
    assert_eq!(position_after(&mut c, "- "), "item · next [a-z]");
    assert_eq!(position_after(&mut c, "- ab"), "word · next [\\n␣a-z]");
    assert_eq!(position_after(&mut c, "- ab "), "item · next [a-z]");
    assert_eq!(position_after(&mut c, "- ab\n"), "root · next \"-\"");
    // A token's text reads as any characters, so the tracker still follows what comes after
    // it; the letter may be the token's own text as far as it knows, hence both rules.
    let mut c = spec("grammar:root ::= \"a\" <[12]> word\nword ::= [a-z]+\n")
        .compile(&v)
        .unwrap();
    assert_eq!(
        position_after(&mut c, "a\u{c}b"),
        "root or word · next [a-z] or end"
    );
    // A regex has no rules: what may come next only.
    let mut c = spec("regex:[0-9]+").compile(&v).unwrap();
    assert_eq!(position_after(&mut c, "1"), "next [0-9] or end");
}

#[test]
fn allowed_all_sets_exactly_n_bits() {
    for n in [1, 31, 32, 33, 512, 32000] {
        let a = Allowed::all(n);
        assert_eq!((0..n + 40).filter(|&i| a.allows(i)).count(), n);
        assert!(a.allows(n - 1) && !a.allows(n));
    }
}

#[test]
fn a_failed_or_stopped_matcher_starts_afresh_and_a_grammar_may_name_a_control_token() {
    let v = vocab();
    // Nothing allowed: llguidance's matcher is in its error state for good; a reset is not.
    let mut c = spec("regex:a[^\\x00-\\x{10FFFF}]").compile(&v).unwrap();
    assert_eq!(c.allowed().unwrap().count, 0);
    c.reset().unwrap();
    assert_eq!(c.allowed().unwrap().count, 0);
    let mut c = spec("regex: (yes|no)").compile(&v).unwrap();
    c.replay(&[id(&v, " no"), 256]).unwrap();
    c.reset().unwrap();
    assert!(c.allowed().unwrap().allows(id(&v, " yes") as usize));
    // An id past the tokenizer's (the logits' padding) is refused and breaks nothing.
    let pad = v.tokenizer_vocab() as u32 + 2;
    assert!(!c.allowed().unwrap().allows(pad as usize));
    assert!(matches!(
        c.advance(pad),
        Err(ConstraintError::Rejected { .. })
    ));
    c.advance(id(&v, " yes")).unwrap();
    assert!(c.allowed().unwrap().end);
    // A control token named in a grammar: allowed where the grammar puts it, nowhere else.
    let sep = v.tokenizer_vocab() - 1;
    let mut c = spec("lark:start: \"no\" <|sep|>").compile(&v).unwrap();
    assert!(!c.allowed().unwrap().allows(sep));
    c.advance(id(&v, "no")).unwrap();
    let a = c.allowed().unwrap();
    assert!(a.allows(sep) && a.count == 1 && !a.end, "{a:?}");
    c.advance(sep as u32).unwrap();
    assert!(c.allowed().unwrap().only_end(&[256]));
    let mut plain = spec("regex: (yes|no)").compile(&v).unwrap();
    assert!(!plain.allowed().unwrap().allows(sep));
}
