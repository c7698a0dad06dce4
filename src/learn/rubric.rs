//! Grading a free-text answer (code_reading, spot_the_bug, open_ended) with the rubric of
//! SPEC §6.4 through an LLM: the prompt, the JSON the model returns, and the weighted score
//! that suggests the rating (Again–Easy). Pure apart from the request value it builds.

use serde::Deserialize;

use crate::llm::LlmRequest;

/// The five rubric dimensions and their weights (sum 1). Correctness weighs most: an answer
/// that is wrong but well written must not pass.
pub const DIMENSIONS: [(&str, f64); 5] =
    [("correctness", 0.40), ("depth", 0.20), ("trade_offs", 0.15), ("real_world", 0.10), ("clarity", 0.15)];

/// What the model returns: a score 0–5 per dimension and a sentence of feedback.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RubricGrade {
    pub scores: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    pub feedback: String,
}

/// Why a model's grade cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RubricError(pub String);

impl std::fmt::Display for RubricError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The grading request for one answer.
pub fn request(question: &str, snippet: Option<&str>, model_answer: &str, answer: &str) -> LlmRequest {
    let names: Vec<&str> = DIMENSIONS.iter().map(|(name, _)| *name).collect();
    let prompt = format!(
        "Grade a developer's answer to a quiz question against the model answer.\n\nQuestion:\n{question}\n\n{}\
         Model answer:\n{model_answer}\n\nDeveloper's answer:\n{answer}\n\n\
         Score each dimension from 0 (absent or wrong) to 5 (excellent): {}.\n\
         Return JSON: {{\"scores\":{{{}}},\"feedback\":\"one or two sentences for the developer\"}}",
        snippet.map(|s| format!("Code:\n{s}\n\n")).unwrap_or_default(),
        names.join(", "),
        names.iter().map(|n| format!("\"{n}\":number")).collect::<Vec<_>>().join(",")
    );
    LlmRequest {
        system: "You are a fair, strict reviewer of programming answers. Answer with one JSON object only.".into(),
        prompt,
        max_tokens: 500,
    }
}

/// Parses the model's answer (a bare object, fenced, or inside prose) and checks every
/// dimension is scored within 0–5.
pub fn parse(text: &str) -> Result<RubricGrade, RubricError> {
    let start = text.find('{').ok_or_else(|| RubricError("the grade has no JSON object".into()))?;
    let end =
        text.rfind('}').filter(|end| *end > start).ok_or_else(|| RubricError("the grade's JSON is cut off".into()))?;
    let grade: RubricGrade = serde_json::from_str(&text[start..=end])
        .map_err(|e| RubricError(format!("the grade is not the expected JSON: {e}")))?;
    for (name, _) in DIMENSIONS {
        match grade.scores.get(name) {
            Some(score) if (0.0..=5.0).contains(score) => {}
            Some(score) => return Err(RubricError(format!("{name} is scored {score}, outside 0–5"))),
            None => return Err(RubricError(format!("the grade has no {name} score"))),
        }
    }
    Ok(grade)
}

/// The weighted score, rounded to a quality 0–5, and never more than one point above
/// the correctness score: style and depth cannot lift a wrong answer to a pass.
pub fn quality(grade: &RubricGrade) -> u8 {
    let score = |name: &str| grade.scores.get(name).copied().unwrap_or(0.0);
    let weighted: f64 = DIMENSIONS.iter().map(|(name, weight)| score(name) * weight).sum();
    weighted.round().min(score("correctness").ceil() + 1.0).clamp(0.0, 5.0) as u8
}

/// The rating a rubric quality suggests: 0–2 Again (a wrong answer), 3 Hard (right with
/// gaps, the SM-2 pass mark), 4 Good, 5 Easy.
pub fn rating(quality: u8) -> crate::learn::schedule::Rating {
    crate::learn::schedule::Rating::from_sm2_quality(i64::from(quality))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grade(scores: [f64; 5]) -> RubricGrade {
        RubricGrade {
            scores: DIMENSIONS.iter().zip(scores).map(|((n, _), s)| ((*n).to_owned(), s)).collect(),
            feedback: String::new(),
        }
    }

    #[test]
    fn weights_sum_to_one_and_correctness_dominates() {
        assert!((DIMENSIONS.iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-9);
        assert_eq!(quality(&grade([5.0; 5])), 5);
        assert_eq!(quality(&grade([0.0; 5])), 0);
        // Wrong but polished does not pass (3 is the pass mark): weighted 2.55 would round to 3.
        assert_eq!(quality(&grade([0.0, 4.0, 4.0, 4.0, 5.0])), 1);
        assert_eq!(quality(&grade([1.0, 5.0, 5.0, 5.0, 5.0])), 2);
        assert_eq!(quality(&grade([4.0, 3.0, 3.0, 3.0, 4.0])), 4);
    }

    #[test]
    fn grades_are_parsed_leniently_and_checked_strictly() {
        let text = "Here you go:\n```json\n{\"scores\":{\"correctness\":4,\"depth\":3,\"trade_offs\":2,\"real_world\":3,\"clarity\":5},\"feedback\":\"Good.\"}\n```";
        let parsed = parse(text).unwrap();
        assert_eq!((quality(&parsed), parsed.feedback.as_str()), (4, "Good."));
        assert!(parse("no json").is_err());
        assert!(parse("{\"scores\":{\"correctness\":4}}").unwrap_err().0.contains("depth"));
        assert!(
            parse("{\"scores\":{\"correctness\":9,\"depth\":3,\"trade_offs\":2,\"real_world\":3,\"clarity\":5}}")
                .unwrap_err()
                .0
                .contains("outside")
        );
        assert!(parse("{\"scores\":").is_err());
    }

    #[test]
    fn the_request_names_every_dimension_and_the_answers() {
        let r = request("Why await?", Some("await f()"), "It yields.", "It waits");
        for (name, _) in DIMENSIONS {
            assert!(r.prompt.contains(name));
        }
        assert!(r.prompt.contains("It yields.") && r.prompt.contains("It waits") && r.prompt.contains("await f()"));
    }
}
