//! Constrained decoding from the command line: the flags of `generate`, `next` and `beam`,
//! the stop reasons, `next --json`'s Z_t, and syntax errors with their line and column.

use super::*;

const DATE: &str = r" [0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])";

#[test]
fn generate_under_a_regex_matches_it_and_says_the_constraint_is_complete() {
    let o = cli(&[
        "generate",
        "--prompt",
        "Lily was born on",
        "--regex",
        DATE,
        "--temperature",
        "1",
        "--seed",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let out = text
        .trim_end_matches('\n')
        .strip_prefix("Lily was born on")
        .unwrap();
    let check = regex::Regex::new(&format!("^(?:{DATE})$")).unwrap();
    assert!(check.is_match(out), "{out:?}");
    assert!(
        stderr(&o).contains("stopped: constraint complete"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn generate_under_a_grammar_and_a_schema_from_files() {
    let g = temp_file(
        "list.gbnf",
        b"root ::= item{2,3}\nitem ::= \"\\n- \" [a-z]+ \".\"\n",
    );
    let o = cli(&[
        "generate",
        "--prompt",
        "Lily liked",
        "--grammar",
        g.to_str().unwrap(),
        "--temperature",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let items = out.trim_end().strip_prefix("Lily liked").unwrap();
    let check = regex::Regex::new(r"^(\n- [a-z]+\.){2,3}$").unwrap();
    assert!(check.is_match(items), "{items:?}");
    // Before any text, the position names the grammar's start rule.
    let v = json(&[
        "next",
        "--prompt",
        "Lily liked",
        "--grammar",
        g.to_str().unwrap(),
        "--json",
    ]);
    let position = v["constraint"]["position"].as_str().unwrap();
    assert!(position.starts_with("root · next "), "{position}");
    let s = temp_file(
        "s.json",
        br#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}"#,
    );
    let o = cli(&[
        "generate",
        "--prompt",
        "Once",
        "--json-schema",
        s.to_str().unwrap(),
        "--seed",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(stdout(&o).trim().strip_prefix("Once").unwrap()).unwrap();
    assert!(v["ok"].is_boolean(), "{v}");
}

#[test]
fn next_json_reports_the_feasible_mass_and_the_allowed_count() {
    let v = json(&[
        "next",
        "--prompt",
        "Once upon a time",
        "--regex",
        " (yes|no)",
        "--json",
    ]);
    let c = &v["constraint"];
    let z = c["feasible_mass"].as_f64().unwrap();
    let allowed = c["allowed"].as_u64().unwrap();
    assert!((2..10).contains(&allowed), "{c}");
    // Z_t is the model's own probability of the allowed tokens.
    let input: Vec<f64> = serde_json::from_value(v["input_probs"].clone()).unwrap();
    let probs: Vec<f64> = serde_json::from_value(v["probs"].clone()).unwrap();
    let allowed_ids: Vec<usize> = (0..probs.len()).filter(|&i| probs[i] > 0.0).collect();
    assert_eq!(allowed_ids.len() as u64, allowed);
    let sum: f64 = allowed_ids.iter().map(|&i| input[i]).sum();
    assert!((sum - z).abs() < 1e-9, "{sum} vs {z}");
    // q = p / Z_t on the allowed tokens.
    for &i in &allowed_ids {
        assert!((probs[i] - input[i] / z).abs() < 1e-9, "{i}");
    }
    assert!(z > 0.0 && z < 0.1, "{z}");
    assert!(c["position"].as_str().unwrap().starts_with("next "), "{c}");
}

#[test]
fn beam_under_a_constraint_returns_instances() {
    let v = json(&[
        "beam",
        "--prompt",
        "Lily was born on",
        "--regex",
        DATE,
        "--json",
    ]);
    let check = regex::Regex::new(&format!("^Lily was born on(?:{DATE})$")).unwrap();
    for s in v["sequences"].as_array().unwrap() {
        let t = s["text"].as_str().unwrap();
        assert!(check.is_match(t), "{t:?}");
        assert_eq!(s["ended"], true);
    }
}

#[test]
fn bad_constraints_are_refused_with_where_and_why() {
    let g = temp_file(
        "bad.gbnf",
        b"root ::= item+\nitem ::= \"- \" [a-z]+ ) \"\\n\"\n",
    );
    let t = std::time::Instant::now();
    let o = cli(&["generate", "--grammar", g.to_str().unwrap()]);
    assert_user_error(&o, "GBNF grammar syntax error at line 2, column");
    assert!(stderr(&o).contains("(rule item)"), "{}", stderr(&o));
    assert!(t.elapsed().as_secs_f64() < 1.0);
    let s = temp_file(
        "bad.json",
        b"{\n  \"type\": \"object\",\n  \"properties\": }\n",
    );
    assert_user_error(
        &cli(&["next", "--json-schema", s.to_str().unwrap()]),
        "JSON Schema syntax error at line 3, column",
    );
    assert_user_error(
        &cli(&["next", "--regex", "(a|b"]),
        "regex syntax error at line 1, column 1",
    );
    assert_user_error(
        &cli(&["next", "--grammar", "/nonexistent.gbnf"]),
        "cannot read /nonexistent.gbnf",
    );
    assert_user_error(
        &cli(&["next", "--regex", "a", "--constraint", "regex:b"]),
        "give one constraint",
    );
    assert_user_error(
        &cli(&["next", "--constraint", "yaml:x"]),
        "start it with regex:",
    );
    // A language the constraint cannot continue: generation stops, saying so.
    let o = cli(&["generate", "--regex", r"a[^\x00-\x{10FFFF}]"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the constraint allows no token here"),
        "{}",
        stderr(&o)
    );
}
