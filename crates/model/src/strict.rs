//! Reading a YAML or JSON document into a `serde_json::Value`, strictly.
//!
//! serde_json's own `Value` keeps the last of two equal keys in a mapping without a word and
//! turns a YAML `.nan` into null (reported downstream as "got nothing (null)"). A user who wrote
//! `period: 10ms, …, period: 5ms` or `wcet: .nan` made a mistake that must be named. This
//! visitor builds the same `Value` but stops at the first duplicate key, NaN, infinity or
//! negative zero, and keeps the path to it (`tasks[3].period`) for the message. Written by hand:
//! neither serde_json nor serde_yaml_ng offers a strict mode for these.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// One step of the path from the document's root.
#[derive(Clone, Debug, PartialEq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// What the strict reader refused, and where.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    DuplicateKey,
    Nan,
    Infinity { negative: bool },
    NegativeZero,
}

impl Problem {
    pub fn message(&self) -> String {
        match self {
            Problem::DuplicateKey => {
                "given twice in the same mapping (the second would silently replace the first)"
                    .into()
            }
            Problem::Nan => "NaN (not a number) is not a value rtsched accepts".into(),
            Problem::Infinity { negative } => format!(
                "{}infinity is not a value rtsched accepts",
                if *negative { "negative " } else { "" }
            ),
            Problem::NegativeZero => "negative zero (-0.0): write 0 if zero is meant".into(),
        }
    }
}

/// A refusal: the path (the last segment is the field), the problem.
#[derive(Debug)]
pub struct Refused {
    pub path: Vec<Seg>,
    pub problem: Problem,
}

/// Render a path as `tasks[3].regions[1].wcet`.
pub fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[derive(Default)]
struct State {
    path: Vec<Seg>,
    refused: Option<Refused>,
}

/// Marker message of the error that unwinds serde once `State::refused` is set.
const REFUSED: &str = "rtsched: refused value";

#[derive(Clone, Copy)]
struct Seed<'s>(&'s RefCell<State>);

impl<'s> Seed<'s> {
    fn refuse<E: de::Error>(&self, problem: Problem, last: Option<Seg>) -> E {
        let mut st = self.0.borrow_mut();
        let mut path = st.path.clone();
        path.extend(last);
        st.refused.get_or_insert(Refused { path, problem });
        E::custom(REFUSED)
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML or JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if v.is_nan() {
            return Err(self.refuse(Problem::Nan, None));
        }
        if v.is_infinite() {
            return Err(self.refuse(Problem::Infinity { negative: v < 0.0 }, None));
        }
        if v == 0.0 && v.is_sign_negative() {
            return Err(self.refuse(Problem::NegativeZero, None));
        }
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            self.0.borrow_mut().path.push(Seg::Index(out.len()));
            let next = seq.next_element_seed(self);
            self.0.borrow_mut().path.pop();
            match next? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(self.refuse(Problem::DuplicateKey, Some(Seg::Key(k))));
            }
            self.0.borrow_mut().path.push(Seg::Key(k.clone()));
            let v = map.next_value_seed(self);
            self.0.borrow_mut().path.pop();
            out.insert(k, v?);
        }
        Ok(Value::Object(out))
    }
}

/// How reading a document failed: a value the strict reader refused, or malformed text
/// (serde's own message, with its position when it has one).
pub enum ReadError {
    Refused(Refused),
    Malformed {
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    /// A bare number the float it is read into cannot hold (`10.00000000000000001` is read
    /// as 10): at `line`, `column`, as written and as it would be read.
    Inexact {
        line: usize,
        column: usize,
        written: String,
        read: String,
    },
}

fn finish<E: fmt::Display>(
    st: RefCell<State>,
    r: Result<Value, E>,
    pos: impl FnOnce(&E) -> Option<(usize, usize)>,
) -> Result<Value, ReadError> {
    match r {
        Ok(v) => Ok(v),
        Err(e) => match st.into_inner().refused {
            Some(refused) => Err(ReadError::Refused(refused)),
            None => {
                let (line, column) = pos(&e).map_or((None, None), |(l, c)| (Some(l), Some(c)));
                Err(ReadError::Malformed {
                    line,
                    column,
                    message: e.to_string(),
                })
            }
        },
    }
}

/// Deepest flow nesting (`[`, `{`) taken before parsing. libyaml's scanner takes time
/// quadratic in that depth (100,000 levels: minutes) before serde's recursion limit (128)
/// refuses the document anyway, so deeper text is refused here, at once.
const MAX_FLOW_DEPTH: usize = 200;

/// Text read character by character before it is parsed, for checks that need positions serde
/// does not give: whether a character is plain text (outside quoted scalars and comments), and
/// where it is. Written by hand: no YAML library here exposes its scanner. (A block scalar is
/// read as plain text.)
struct Lexer {
    line: usize,
    col: usize,
    quote: Option<char>,
    comment: bool,
    escaped: bool,
    prev: char,
}

impl Lexer {
    fn new() -> Self {
        Lexer {
            line: 1,
            col: 0,
            quote: None,
            comment: false,
            escaped: false,
            prev: '\n',
        }
    }
    /// Whether the next character is plain text.
    fn plain(&self) -> bool {
        self.quote.is_none() && !self.comment
    }
    /// The 1-based line and column of the next character.
    fn next_pos(&self) -> (usize, usize) {
        (self.line, self.col + 1)
    }
    /// Take `c`; a quote character opens a quoted scalar only if `quote_may_open`.
    fn step(&mut self, c: char, quote_may_open: bool) {
        self.col += 1;
        if c == '\n' {
            (self.line, self.col, self.comment) = (self.line + 1, 0, false);
            if self.quote != Some('"') {
                self.escaped = false;
            }
        } else {
            match self.quote {
                _ if self.comment => {}
                Some('"') if self.escaped => self.escaped = false,
                Some('"') if c == '\\' => self.escaped = true,
                Some(q) if c == q => self.quote = None,
                Some(_) => {}
                None => match c {
                    '#' if self.prev.is_whitespace() => self.comment = true,
                    '"' | '\'' if quote_may_open => self.quote = Some(c),
                    _ => {}
                },
            }
        }
        self.prev = c;
    }
}

/// Where flow nesting first exceeds [`MAX_FLOW_DEPTH`] (1-based line and column), skipping
/// quoted scalars and comments. (A block scalar full of brackets could be miscounted; such text
/// would need 200 unclosed ones.)
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut lx, mut depth) = (Lexer::new(), 0usize);
    for c in text.chars() {
        if lx.plain() {
            match c {
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Some(lx.next_pos());
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        lx.step(c, true);
    }
    None
}

/// A decimal number's value as (negative, significant digits, power of ten): equal for
/// `10`, `10.000` and `1e1`. `None` if `s` is not a decimal number.
fn decimal_value(s: &str) -> Option<(bool, String, i64)> {
    let (neg, t) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let all = format!("{int}{frac}");
    let digits = all.trim_start_matches('0');
    let kept = digits.trim_end_matches('0');
    let exp = exp
        .checked_sub(frac.len() as i64)?
        .checked_add((digits.len() - kept.len()) as i64)?;
    Some((
        neg && !kept.is_empty(),
        kept.to_string(),
        if kept.is_empty() { 0 } else { exp },
    ))
}

/// The first bare (unquoted) number with a fraction or an exponent that reading it as a
/// 64-bit float would change, with its position (1-based) and the value it would be read as:
/// times are whole nanoseconds, and a quoted duration with digits finer than that is refused,
/// so a bare one must not be rounded without a word. Quoted scalars and comments are skipped,
/// as in [`too_deep`].
fn inexact_number(text: &str) -> Option<(usize, usize, String, String)> {
    let mut lx = Lexer::new();
    let mut token = String::new();
    let mut start = (0, 0);
    let check = |token: &str, at: (usize, usize)| -> Option<(usize, usize, String, String)> {
        if !token.contains(['.', 'e', 'E']) || token.len() < 16 {
            return None; // integers are read exactly; 15 significant digits survive a float
        }
        let written = decimal_value(token)?;
        let f: f64 = token.parse().ok()?;
        let read = format!("{f}");
        (f.is_finite() && decimal_value(&read) != Some(written))
            .then(|| (at.0, at.1, token.to_string(), read))
    };
    for c in text.chars() {
        let delimiter = c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}' | ':' | '#');
        // A quote opens a quoted scalar only where a scalar starts (`don't` is plain text).
        if lx.plain() && !delimiter && !(token.is_empty() && matches!(c, '"' | '\'')) {
            if token.is_empty() {
                start = lx.next_pos();
            }
            token.push(c);
        } else if !token.is_empty() {
            if let Some(found) = check(&token, start) {
                return Some(found);
            }
            token.clear();
        }
        lx.step(c, token.is_empty());
    }
    check(&token, start)
}

/// Read YAML text strictly.
pub fn from_yaml(text: &str) -> Result<Value, ReadError> {
    if let Some((line, column)) = too_deep(text) {
        return Err(ReadError::Malformed {
            line: Some(line),
            column: Some(column),
            message: format!("nested more than {MAX_FLOW_DEPTH} levels deep"),
        });
    }
    if let Some((line, column, written, read)) = inexact_number(text) {
        return Err(ReadError::Inexact {
            line,
            column,
            written,
            read,
        });
    }
    let st = RefCell::new(State::default());
    let r = Seed(&st).deserialize(serde_yaml_ng::Deserializer::from_str(text));
    finish(st, r, |e: &serde_yaml_ng::Error| {
        e.location().map(|l| (l.line(), l.column()))
    })
}

/// Read JSON text strictly (JSON has no NaN or infinity literals; negative zero and duplicate
/// keys are what it can carry).
pub fn from_json(text: &str) -> Result<Value, ReadError> {
    if let Some((line, column, written, read)) = inexact_number(text) {
        return Err(ReadError::Inexact {
            line,
            column,
            written,
            read,
        });
    }
    let st = RefCell::new(State::default());
    let mut de = serde_json::Deserializer::from_str(text);
    let r = Seed(&st)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    finish(st, r, |e: &serde_json::Error| {
        (e.line() > 0).then(|| (e.line(), e.column()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_number_a_float_would_change_is_found_with_its_place() {
        let found =
            inexact_number("tasks:\n  - {name: a, period: 10.00000000000000001, wcet: 1}\n")
                .unwrap();
        assert_eq!(found, (2, 23, "10.00000000000000001".into(), "10".into()));
        // JSON the same; exact ones, integers, quoted text and comments are left alone.
        assert!(inexact_number("{\"period\": 0.30000000000000000001}").is_some());
        for ok in [
            "period: 10.000000000000000000\n",
            "period: 1234567890.123456\n",
            "seed: 18446744073709551615\n",
            "period: '10.00000000000000001'\n",
            "name: \"a 10.00000000000000001 b\"\n",
            "period: 10 # 10.00000000000000001\n",
            "period: 10.00000000000000001ms\n",
            "u: 0.1\nv: 1e-7\nw: 2.5E+3\n",
        ] {
            assert_eq!(inexact_number(ok), None, "{ok}");
        }
        assert!(matches!(
            from_yaml("a: 1.00000000000000000001\n"),
            Err(ReadError::Inexact {
                line: 1,
                column: 4,
                ..
            })
        ));
        assert_eq!(decimal_value("10.000"), decimal_value("1e1"));
        assert_eq!(decimal_value("-0.0"), decimal_value("0"));
        assert_eq!(decimal_value("ab"), None);
    }

    proptest::proptest! {
        /// A bare number is let through only when the float it is read into keeps its value
        /// exactly (as written, with its digits and exponent), whatever its length.
        #[test]
        fn a_bare_number_passes_only_if_its_float_keeps_it(int in 0u64..10_000_000, frac in "[0-9]{1,24}", exp in proptest::option::of(-30i32..30)) {
            let mut text = format!("{int}.{frac}");
            if let Some(e) = exp {
                text.push_str(&format!("e{e}"));
            }
            let f: f64 = text.parse().unwrap();
            let kept = decimal_value(&format!("{f}")) == decimal_value(&text);
            let doc = format!("tasks:\n  - {{name: a, period: {text}}}\n");
            proptest::prop_assert_eq!(inexact_number(&doc).is_none(), kept, "{}", text);
            if kept {
                let v = from_yaml(&doc).ok().unwrap();
                proptest::prop_assert_eq!(v["tasks"][0]["period"].as_f64(), Some(f));
            }
        }
    }

    fn refused_yaml(text: &str) -> (String, Problem) {
        match from_yaml(text) {
            Err(ReadError::Refused(r)) => (path_string(&r.path), r.problem),
            Err(ReadError::Malformed { message, .. }) => {
                panic!("malformed, not refused: {message}")
            }
            Err(ReadError::Inexact { written, .. }) => panic!("inexact, not refused: {written}"),
            Ok(v) => panic!("accepted: {v}"),
        }
    }

    #[test]
    fn duplicate_keys_are_refused_with_their_path() {
        let (p, what) = refused_yaml("tasks:\n  - {name: a, period: 10, wcet: 1, period: 5}\n");
        assert_eq!(
            (p.as_str(), what),
            ("tasks[0].period", Problem::DuplicateKey)
        );
        let (p, _) = refused_yaml("platform: {cpus: 2}\nplatform: {cpus: 4}\n");
        assert_eq!(p, "platform");
        match from_json(r#"{"a": {"b": [1, {"c": 1, "c": 2}]}}"#) {
            Err(ReadError::Refused(r)) => assert_eq!(path_string(&r.path), "a.b[1].c"),
            _ => panic!("duplicate JSON key accepted"),
        }
    }

    #[test]
    fn nan_infinity_and_negative_zero_are_refused() {
        assert_eq!(
            refused_yaml("x: [1, {wcet: .nan}]"),
            ("x[1].wcet".into(), Problem::Nan)
        );
        assert_eq!(
            refused_yaml("wcet: .inf").1,
            Problem::Infinity { negative: false }
        );
        assert_eq!(
            refused_yaml("wcet: -.inf").1,
            Problem::Infinity { negative: true }
        );
        assert_eq!(refused_yaml("offset: -0.0").1, Problem::NegativeZero);
        assert!(matches!(
            from_json(r#"{"offset": -0.0}"#),
            Err(ReadError::Refused(Refused {
                problem: Problem::NegativeZero,
                ..
            }))
        ));
    }

    #[test]
    fn ordinary_documents_read_as_serde_json_reads_them() {
        let y = "a: 1\nb: [x, 2.5, -3, null, true]\nc: {d: '10ms', e: 0.0, f: -0}\n";
        let want: Value = serde_yaml_ng::from_str(y).unwrap();
        assert_eq!(from_yaml(y).ok().unwrap(), want);
        // (JSON's `-0` is negative zero to serde_json, refused like `-0.0`; YAML's `-0` is 0.)
        let j =
            r#"{"a": 1, "b": ["x", 2.5, -3, null, true], "c": {"d": "10ms", "e": 0.0, "f": 0}}"#;
        assert_eq!(
            from_json(j).ok().unwrap(),
            serde_json::from_str::<Value>(j).unwrap()
        );
        // Key order is kept (the validators report the first unknown field in file order).
        let v = from_yaml("z: 1\na: 2\n").ok().unwrap();
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["z", "a"]
        );
    }

    #[test]
    fn deep_flow_nesting_is_refused_before_parsing() {
        let deep = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            from_yaml(&deep),
            Err(ReadError::Malformed {
                line: Some(1),
                column: Some(204),
                ..
            })
        ));
        // Brackets in quotes and comments are not nesting.
        let quoted = format!(
            "a: '{}'\nb: \"{}\" # {}\n",
            "[".repeat(500),
            "{".repeat(500),
            "[".repeat(500)
        );
        assert!(from_yaml(&quoted).is_ok());
        assert!(from_yaml(&format!("a: {}1{}", "[".repeat(100), "]".repeat(100))).is_ok());
    }

    #[test]
    fn malformed_text_keeps_its_position() {
        match from_json("{\"a\": NaN}") {
            Err(ReadError::Malformed { line, column, .. }) => {
                assert_eq!((line, column), (Some(1), Some(7)))
            }
            _ => panic!("NaN literal accepted in JSON"),
        }
    }
}
