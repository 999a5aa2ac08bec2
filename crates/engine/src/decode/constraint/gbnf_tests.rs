use super::*;

/// llama.cpp's `grammars/json.gbnf`.
const JSON_GBNF: &str = r#"root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
"#;

fn lark(src: &str) -> String {
    match to_lark(src) {
        Ok(s) => s,
        Err(e) => panic!("{src:?}: {e}"),
    }
}

fn err(src: &str) -> GbnfError {
    match to_lark(src) {
        Ok(s) => panic!("{src:?} translated to {s:?}"),
        Err(e) => e,
    }
}

/// The error's line, column, rule and message start.
fn check_err(src: &str, line: usize, column: usize, rule: Option<&str>, message: &str) {
    let e = err(src);
    assert_eq!((e.line, e.column), (line, column), "{src:?}: {e}");
    assert_eq!(e.rule.as_deref(), rule, "{src:?}: {e}");
    assert!(e.message.starts_with(message), "{src:?}: {e}");
}

#[test]
fn strings_become_one_lexeme_per_character() {
    assert_eq!(
        lark(r#"root ::= "yes" | "no""#),
        "start: \"y\" \"e\" \"s\" | \"n\" \"o\"\n"
    );
    assert_eq!(
        lark(r#"root ::= "\x41\u00e9\U0001F600\t\"\\\[\]\-é""#),
        "start: \"A\" \"é\" \"😀\" \"\\t\" \"\\\"\" \"\\\\\" \"[\" \"]\" \"-\" \"é\"\n"
    );
    assert_eq!(
        lark(r#"root ::= "\x7F\x00""#),
        "start: \"\\u007f\" \"\\u0000\"\n"
    );
    assert_eq!(lark(r#"root ::= "" | """#), "start: \"\" | \"\"\n");
}

#[test]
fn classes_and_any_become_regexes() {
    assert_eq!(
        lark(r#"root ::= [a-z0-9_] [^"] . [\]\--/]"#),
        concat!(
            r"start: /[\x{61}-\x{7A}\x{30}-\x{39}\x{5F}]/ /[^\x{22}]/ /(?s:.)/",
            " /[\\x{5D}\\x{2D}-\\x{2F}]/\n"
        )
    );
    // A trailing '-' is a character; `[]` and `[^]` add nothing, as in llama.cpp.
    assert_eq!(
        lark(r#"root ::= [a-] [] [^] "x""#),
        "start: /[\\x{61}\\x{2D}]/ \"x\"\n"
    );
    // Surrogates and reversed ranges match nothing.
    assert_eq!(
        lark(r#"root ::= [\uD800-\uDFFF] [^z-a]"#),
        format!("start: /{NO_CHAR}/ /{ANY_CHAR}/\n")
    );
    assert_eq!(
        lark(r#"root ::= [\uD000-\uE000]"#),
        "start: /[\\x{D000}-\\x{E000}]/\n"
    );
}

#[test]
fn repetitions() {
    let src = concat!(
        "root ::= x{2,3} x{2} x{1,} x{0,1} x* x+ x? x{,4} x{0} x{0,0} x{5,3000} x{ 1 , 2 }\n",
        "x ::= \"x\""
    );
    assert_eq!(
        lark(src),
        "start: x{2,3} x{2} x+ x? x* x+ x? x{0,4} x{5,} x{1,2}\nx: \"x\"\n"
    );
    // Repetitions apply to the whole string, and chain. A repeated character or class that
    // nothing after it can continue is one lexeme (`"c"*`, `[0-9]{4}`); `"d"{2}` is followed
    // by its own `"d"` (the outer `{3}`), so it stays a lexeme a character.
    assert_eq!(
        lark(r#"root ::= "ab"* "c"*? "d"{2}{3}"#),
        "start: (\"a\" \"b\")* ((/\\x{63}+/)?)? (\"d\"{2}){3}\n"
    );
    assert_eq!(
        lark(r#"root ::= ("a" | "b"){2,} [0-9]{4}"#),
        "start: (\"a\" | \"b\"){2,} /[\\x{30}-\\x{39}]{4}/\n"
    );
}

#[test]
fn runs_become_one_lexeme_where_no_parse_is_lost() {
    // The list preset: a word is read whole, as no word goes on with a letter.
    assert_eq!(
        lark("root ::= item{2,8}\nitem ::= \"\\n- \" [a-z]+ (\" \" [a-z]+)? \".\""),
        concat!(
            "start: item{2,8}\n",
            r#"item: "\n" "-" " " /[\x{61}-\x{7A}]+/ (" " /[\x{61}-\x{7A}]+/)? ".""#,
            "\n"
        )
    );
    // `[a-z]*` then a letter: per character.
    assert_eq!(
        lark("root ::= [a-z]* \"s\" \" \"*"),
        "start: /[\\x{61}-\\x{7A}]/* \"s\" (/\\x{20}+/)?\n"
    );
}

#[test]
fn names_map_to_lark_names() {
    let src = concat!(
        "root ::= Foo start my-rule 9x\nFoo ::= \"f\"\nstart ::= \"s\"\n",
        "my-rule ::= \"m\"\n9x ::= \"9\""
    );
    assert_eq!(
        lark(src),
        concat!(
            "start: r_1 r_2 my-rule r_4\n// GBNF rule Foo\nr_1: \"f\"\n",
            "// GBNF rule start\nr_2: \"s\"\nmy-rule: \"m\"\n// GBNF rule 9x\nr_4: \"9\"\n"
        )
    );
}

#[test]
fn newlines_comments_and_empty_alternatives() {
    let src = concat!(
        "# c\nroot ::= # c\n  \"a\" | # c\n  \"b\" ( \"c\"\n  | \"d\" ) # c\n\r\n",
        "y ::= \"y\"\r\nx ::= \"x\" |"
    );
    assert_eq!(
        lark(src),
        "start: \"a\" | \"b\" (\"c\" | \"d\")\ny: \"y\"\nx: \"x\" | \"\"\n"
    );
    // After '|' a newline continues the rule, so `y` is a reference here (as in llama.cpp).
    check_err(
        "root ::= \"x\" |\ny ::= \"y\"",
        2,
        3,
        Some("root"),
        "expecting newline or end",
    );
    assert_eq!(lark("root ::= | \"a\" |"), "start: \"\" | \"a\" | \"\"\n");
    assert_eq!(lark("root ::= (\n)"), "start: (\"\")\n");
}

#[test]
fn tokens() {
    assert_eq!(
        lark("root ::= <[12]> !<[13]> <think>"),
        "start: <[12]> <[^13]> <think>\n"
    );
    check_err(
        "root ::= !<think>",
        1,
        10,
        Some("root"),
        "negated token text",
    );
    check_err("root ::= <a b>", 1, 10, Some("root"), "bad token text");
    check_err("root ::= <>", 1, 10, Some("root"), "bad token text");
    check_err("root ::= <[x]>", 1, 12, Some("root"), "expecting integer");
    check_err("root ::= <[1>", 1, 13, Some("root"), "expecting ']'");
    check_err("root ::= <abc", 1, 14, Some("root"), "expecting '>'");
    check_err("root ::= !x", 1, 11, Some("root"), "expecting '<'");
}

#[test]
fn deep_groups_move_to_helper_rules() {
    let depth = 40;
    let src = format!("root ::= {}\"a\"{}", "(".repeat(depth), ")".repeat(depth));
    let out = lark(&src);
    assert!(out.contains("g_1: "), "{out}");
    let max_parens = out
        .lines()
        .map(|l| {
            let mut d = 0usize;
            let mut max = 0;
            for c in l.chars() {
                d = if c == '(' {
                    d + 1
                } else if c == ')' {
                    d.saturating_sub(1)
                } else {
                    d
                };
                max = max.max(d);
            }
            max
        })
        .max();
    assert_eq!(max_parens, Some(LARK_MAX_PARENS));
    let src = format!(
        "root ::= {}\"a\"{}",
        "(".repeat(MAX_NESTING),
        ")".repeat(MAX_NESTING)
    );
    assert!(to_lark(&src).is_ok());
}

#[test]
fn json_gbnf_translates() {
    let out = lark(JSON_GBNF);
    assert!(
        out.starts_with(
            "start: object\nvalue: object | array | string | number | (\"t\" \"r\" \"u\" \"e\""
        ),
        "{out}"
    );
    assert!(
        // Nothing that follows `ws` is a space or a tab, and no lexeme that may start where its
        // run does (after a newline) goes on with one: the run is one lexeme.
        out.contains("ws: \"\" | \" \" | \"\\n\" (/[\\x{20}\\x{9}]{1,20}/)?\n"),
        "{out}"
    );
    assert!(
        out.contains("/[^\\x{22}\\x{5C}\\x{7F}\\x{0}-\\x{1F}]/"),
        "{out}"
    );
}

#[test]
fn rule_errors() {
    check_err(
        "a ::= \"x\"",
        1,
        1,
        None,
        "grammar does not contain a 'root' rule",
    );
    check_err("", 1, 1, None, "grammar does not contain a 'root' rule");
    check_err(
        "root ::= \"a\" foo\nfoo ::= bar",
        2,
        9,
        Some("foo"),
        "Undefined rule identifier 'bar'",
    );
    assert_eq!(
        lark("root ::= \"a\"\n  foo ::= \"b\""),
        "start: \"a\"\nfoo: \"b\"\n"
    );
    check_err("::= \"a\"", 1, 1, None, "expecting name");
    check_err("root = \"a\"", 1, 6, Some("root"), "expecting ::=");
    check_err("root\n::= \"a\"", 1, 5, Some("root"), "expecting ::=");
    check_err(
        "root ::= a\na ::= \"x\"\na ::= \"y\"",
        3,
        1,
        Some("a"),
        "rule defined twice",
    );
    check_err("root ::= \"a\"\n| \"b\"", 2, 1, None, "expecting name");
    check_err(
        "root ::= \"a\" )",
        1,
        14,
        Some("root"),
        "expecting newline or end",
    );
    check_err(
        "root ::= \"a\"\0 b",
        1,
        13,
        None,
        "unexpected NUL character",
    );
}

#[test]
fn character_errors() {
    check_err(
        "root ::= \"abc",
        1,
        14,
        Some("root"),
        "unexpected end of input",
    );
    check_err(
        "root ::= \"a\nb",
        2,
        2,
        Some("root"),
        "unexpected end of input",
    );
    check_err(
        "root ::= [a-",
        1,
        13,
        Some("root"),
        "unexpected end of input",
    );
    check_err(
        "root ::= [ab",
        1,
        13,
        Some("root"),
        "unexpected end of input",
    );
    check_err("root ::= \"\\q\"", 1, 11, Some("root"), "unknown escape");
    check_err("root ::= \"\\", 1, 11, Some("root"), "unknown escape");
    check_err(
        "root ::= \"\\x4\"",
        1,
        11,
        Some("root"),
        "expecting 2 hex chars",
    );
    check_err(
        "root ::= [\\u12]",
        1,
        11,
        Some("root"),
        "expecting 4 hex chars",
    );
    check_err(
        "root ::= \"\\U0011000\"",
        1,
        11,
        Some("root"),
        "expecting 8 hex chars",
    );
    check_err(
        "root ::= \"\\uD800\"",
        1,
        11,
        Some("root"),
        "U+D800 is not a Unicode scalar value",
    );
    check_err(
        "root ::= \"\\U00110000\"",
        1,
        11,
        Some("root"),
        "U+110000 is not",
    );
}

#[test]
fn group_and_repetition_errors() {
    check_err("root ::= (\"a\"", 1, 14, Some("root"), "expecting ')'");
    check_err("root ::= (\"a\" ]", 1, 15, Some("root"), "expecting ')'");
    check_err(
        "root ::= *",
        1,
        10,
        Some("root"),
        "expecting preceding item",
    );
    check_err(
        "root ::= \"a\" | +",
        1,
        16,
        Some("root"),
        "expecting preceding item",
    );
    check_err(
        "root ::= \"\"?",
        1,
        12,
        Some("root"),
        "expecting preceding item",
    );
    check_err(
        "root ::= \"a\"{0}*",
        1,
        16,
        Some("root"),
        "expecting preceding item",
    );
}

#[test]
fn counted_repetition_errors() {
    check_err("root ::= \"a\"{a}", 1, 14, Some("root"), "expecting an int");
    check_err("root ::= \"a\"{2;}", 1, 15, Some("root"), "expecting ','");
    check_err("root ::= \"a\"{2,3", 1, 17, Some("root"), "expecting '}'");
    check_err(
        "root ::= \"a\"{2,\n3}",
        1,
        16,
        Some("root"),
        "expecting '}'",
    );
    check_err(
        "root ::= \"a\"{3,2}",
        1,
        13,
        Some("root"),
        "repetition maximum is smaller",
    );
    check_err(
        "root ::= \"a\"{2001}",
        1,
        19,
        Some("root"),
        "number of repetitions exceeds",
    );
    check_err(
        "root ::= \"a\"{99999999999999999999}",
        1,
        14,
        Some("root"),
        "integer out of range",
    );
    check_err(
        "root ::= \"a\"{1000}{2}",
        1,
        19,
        Some("root"),
        "number of rules that are going",
    );
    check_err(
        "root ::= (\"a\"{0,50}){40}",
        1,
        21,
        Some("root"),
        "number of rules that are going",
    );
    assert!(to_lark("root ::= (\"a\"{50}){40}").is_ok());
    assert!(to_lark("root ::= \"a\"{1000}{1}").is_ok());
    let deep = format!("root ::= {}\"a\"", "(".repeat(MAX_NESTING + 1));
    check_err(
        &deep,
        1,
        10 + MAX_NESTING,
        Some("root"),
        "nesting deeper than 200",
    );
    let stars = format!("root ::= \"a\"{}", "*".repeat(10_000));
    check_err(
        &stars,
        1,
        13 + MAX_NESTING + 1,
        Some("root"),
        "nesting deeper than 200",
    );
}

#[test]
fn display() {
    let e = err("root ::= foo");
    assert_eq!(
        e.to_string(),
        "line 1, column 10 (rule root): Undefined rule identifier 'foo'"
    );
    let e = err("x ::= \"a\"");
    assert_eq!(
        e.to_string(),
        "line 1, column 1: grammar does not contain a 'root' rule"
    );
}

/// xorshift64*: a fixed sequence, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Each error is placed inside the source (or just past its end).
fn check_no_panic(src: &str) {
    // The rule tracker reads the grammar and follows a text (the grammar's own) without a
    // panic, whatever it names.
    #[cfg(feature = "constraint")]
    if let Ok(bnf) = to_bnf(src) {
        let mut t = crate::decode::constraint::rules::RuleTracker::new(bnf);
        t.feed(src.as_bytes());
        let _ = t.rule();
    }
    match to_lark(src) {
        Ok(out) => assert!(out.contains("start: "), "{src:?} -> {out:?}"),
        Err(e) => {
            let lines = src.split('\n').count();
            assert!(
                e.line >= 1 && e.line <= lines && e.column >= 1,
                "{src:?}: {e}"
            );
        }
    }
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let alphabet: Vec<char> = "\"[]()|*+?{},.:=\\-^#<>!\n\r\t xuU0129afzAZ_é\u{0}\u{7f}😀"
        .chars()
        .collect();
    for _ in 0..3000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check_no_panic(&String::from_utf8_lossy(&bytes));
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        check_no_panic(&s);
        check_no_panic(&format!("root ::= {s}"));
    }
    let base: Vec<char> = JSON_GBNF.chars().collect();
    for _ in 0..3000 {
        let mut s = base.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(s.len() + 1);
            match rng.below(3) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 if at < s.len() => s[at] = alphabet[rng.below(alphabet.len())],
                _ => s.insert(at, alphabet[rng.below(alphabet.len())]),
            }
        }
        check_no_panic(&s.iter().collect::<String>());
    }
}
