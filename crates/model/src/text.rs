//! Text helpers shared by every reader of user input: the "did you mean" hint and sizes in
//! bytes. The bottom of the crate: it uses only [`crate::time`]'s decimal reading.

use crate::time::parse_decimal_scaled;

/// The known name closest to `word` by edit distance, if it is close enough to be a typo.
/// Case is ignored (`GEDF` is `gedf` mistyped): every name rtsched reads is matched exactly,
/// so a hint in other case points to the spelling that is accepted.
pub fn closest<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    let word = word.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = edit_distance(&word, &k.to_lowercase());
        if d <= 2.max(k.len() / 3) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != *cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A size in bytes: `"4096"`, `"512B"`, `"64KiB"`, `"2MiB"`, `"1.5GiB"` (binary units only,
/// since "kB" is read as 1000 by some and 1024 by others).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{s}' (use B, KiB, MiB, GiB)"
            ))
        }
    };
    parse_decimal_scaled(num.trim(), scale).map_err(|e| e.replace("nanoseconds", "bytes"))
}

#[cfg(test)]
mod closest_tests {
    use super::closest;

    #[test]
    fn case_is_ignored_and_the_known_spelling_is_suggested() {
        assert_eq!(closest("GEDF", &["gedf", "pedf"]), Some("gedf"));
        assert_eq!(closest("Pfp", &["gedf", "pfp"]), Some("pfp"));
        assert_eq!(closest("gedff", &["gedf", "pedf"]), Some("gedf"));
        assert_eq!(closest("xyzzy", &["gedf", "pedf"]), None);
    }
}
