//! A GBNF grammar as plain productions over characters, for the rule tracker
//! (`constraint/rules.rs`) that names the rule being filled. Groups become nonterminals owned
//! by the rule they are written in; a repetition `X{m,n}` becomes `X X*` (m ≥ 1) or `X*`
//! (`X?` where n = 1): a language at least as large as the grammar's, which is enough to
//! name the rules of a text the matcher (llguidance, on the exact grammar) has allowed.
//! A token (`<[id]>`, `!<[id]>`, `<|im_end|>`) reads as any characters, or none: whatever
//! text the token the matcher allowed there holds.

use super::{parse, Atom, CharSet, GbnfError, Item};

/// One symbol of a production.
#[derive(Debug)]
pub(crate) enum Sym {
    Chars(CharSet),
    Rule(usize),
}

/// Productions by left-hand nonterminal; nonterminals `0..rules` are the grammar's rules.
#[derive(Debug)]
pub(crate) struct Bnf {
    /// Each nonterminal's GBNF rule: its own name, or the name of the rule it is written in.
    pub(crate) owner: Vec<String>,
    pub(crate) prods: Vec<(usize, Vec<Sym>)>,
    pub(crate) start: usize,
}

/// The grammar's productions; the errors are `to_lark`'s.
pub(crate) fn to_bnf(src: &str) -> Result<Bnf, GbnfError> {
    let p = parse(src)?;
    let mut g = Bnf {
        owner: p.names.clone(),
        prods: Vec::new(),
        start: p.name_ids["root"],
    };
    for (id, alts) in &p.rules {
        for seq in alts {
            let body = g.seq(seq, *id);
            g.prods.push((*id, body));
        }
    }
    Ok(g)
}

impl Bnf {
    fn fresh(&mut self, owner: usize) -> usize {
        self.owner.push(self.owner[owner].clone());
        self.owner.len() - 1
    }

    fn seq(&mut self, seq: &[Item], owner: usize) -> Vec<Sym> {
        let mut out = Vec::new();
        for item in seq {
            let mut syms = self.atom(&item.0, owner);
            if let Some((min, max)) = item.1 {
                syms = self.repeat(syms, min, max, owner);
            }
            out.extend(syms);
        }
        out
    }

    fn atom(&mut self, atom: &Atom, owner: usize) -> Vec<Sym> {
        match atom {
            Atom::Chars(c) => c.iter().map(|&ch| Sym::Chars(CharSet::one(ch))).collect(),
            Atom::Class(_, set) => vec![Sym::Chars(set.clone())],
            Atom::Raw(_) => {
                let any = self.fresh(owner);
                self.prods.push((any, Vec::new()));
                self.prods
                    .push((any, vec![Sym::Chars(CharSet::any()), Sym::Rule(any)]));
                vec![Sym::Rule(any)]
            }
            Atom::Ref(id) => vec![Sym::Rule(*id)],
            Atom::Group(alts) => {
                let g = self.fresh(owner);
                for seq in alts {
                    let body = self.seq(seq, owner);
                    self.prods.push((g, body));
                }
                vec![Sym::Rule(g)]
            }
        }
    }

    /// `syms` repeated: `X?`, `X*` or `X X*`.
    fn repeat(&mut self, syms: Vec<Sym>, min: u64, max: Option<u64>, owner: usize) -> Vec<Sym> {
        let x = self.fresh(owner);
        self.prods.push((x, syms));
        let rest = self.fresh(owner);
        self.prods.push((rest, Vec::new()));
        if max == Some(1) {
            self.prods.push((rest, vec![Sym::Rule(x)]));
        } else {
            self.prods.push((rest, vec![Sym::Rule(x), Sym::Rule(rest)]));
        }
        match min {
            0 => vec![Sym::Rule(rest)],
            _ if max == Some(1) => vec![Sym::Rule(x)],
            _ => vec![Sym::Rule(x), Sym::Rule(rest)],
        }
    }
}
