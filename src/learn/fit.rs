//! Re-fitting FSRS's parameters to one learner's review log (SPEC §7: `optimize_scheduler`,
//! weekly, only with at least [`MIN_REVIEWS`] reviews; below that the defaults stand). Pure:
//! the log in, the 21 parameters out; the job reads and stores them.
//!
//! The log becomes FSRS training items as Anki builds them: per card, its reviews in order,
//! each with the whole days elapsed since the previous one (0 for the first and for same-day
//! reviews); every prefix that ends in a review on a later day is one item.

use fsrs::{ComputeParametersInput, FSRSItem, FSRSReview};

use crate::clock::Millis;
use crate::learn::day::LearnerDay;
use crate::learn::schedule::Rating;

/// Reviews needed before a fit replaces the defaults (SPEC §7).
pub const MIN_REVIEWS: usize = 64;

/// Why no parameters were fitted.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{0} reviews on record; a fit needs at least {MIN_REVIEWS}")]
    TooFewReviews(usize),
    #[error("the review log gives no item FSRS can learn from (no card was reviewed on two days)")]
    NoItems,
    #[error("FSRS could not fit the review log: {0:?}")]
    Fsrs(#[source] fsrs::FSRSError),
}

/// One card's answers, oldest first: (rating, time).
pub type CardHistory = Vec<(Rating, Millis)>;

/// FSRS training items from the cards' histories.
pub fn items(cards: &[CardHistory], days: &LearnerDay) -> Vec<FSRSItem> {
    let mut out = Vec::new();
    for history in cards {
        let mut reviews: Vec<FSRSReview> = Vec::with_capacity(history.len());
        let mut previous_day: Option<i64> = None;
        for &(rating, at) in history {
            let day = days.day_of(at);
            let delta_t = previous_day.map_or(0, |p| u32::try_from((day - p).max(0)).unwrap_or(u32::MAX));
            previous_day = Some(day);
            reviews.push(FSRSReview { rating: u32::from(rating.number()), delta_t });
            if delta_t > 0 {
                out.push(FSRSItem { reviews: reviews.clone() });
            }
        }
    }
    out
}

/// The learner's parameters, or why the defaults stand.
pub fn fit(cards: &[CardHistory], days: &LearnerDay) -> Result<Vec<f32>, FitError> {
    let reviews: usize = cards.iter().map(Vec::len).sum();
    if reviews < MIN_REVIEWS {
        return Err(FitError::TooFewReviews(reviews));
    }
    let train_set = items(cards, days);
    if train_set.is_empty() {
        return Err(FitError::NoItems);
    }
    let input = ComputeParametersInput { train_set, ..ComputeParametersInput::default() };
    let parameters = fsrs::compute_parameters(input).map_err(FitError::Fsrs)?;
    Ok(parameters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::schedule::{DAY_MS, Scheduler};

    const T0: Millis = 1_780_000_000_000;

    #[test]
    fn items_are_prefixes_ending_on_a_later_day() {
        let card = vec![(Rating::Good, T0), (Rating::Again, T0 + 60_000), (Rating::Good, T0 + 3 * DAY_MS)];
        let items = items(&[card], &LearnerDay::default());
        assert_eq!(items.len(), 1);
        let deltas: Vec<(u32, u32)> = items[0].reviews.iter().map(|r| (r.rating, r.delta_t)).collect();
        assert_eq!(deltas, [(3, 0), (1, 0), (3, 3)]);
    }

    #[test]
    fn fewer_than_64_reviews_keep_the_defaults() {
        let cards = vec![vec![(Rating::Good, T0), (Rating::Good, T0 + 3 * DAY_MS)]; 31];
        assert!(matches!(fit(&cards, &LearnerDay::default()), Err(FitError::TooFewReviews(62))));
    }

    #[test]
    fn a_log_of_enough_reviews_fits_21_parameters_the_scheduler_accepts() {
        // 40 cards over a few weeks: mostly remembered, some forgotten.
        let cards: Vec<CardHistory> = (0..40)
            .map(|i| {
                let mut at = T0 + i * 3_600_000;
                let mut history = vec![(Rating::Good, at)];
                for (step, days) in [2, 5, 12].into_iter().enumerate() {
                    at += days * DAY_MS;
                    let rating = if (i + step as i64) % 5 == 0 { Rating::Again } else { Rating::Good };
                    history.push((rating, at));
                }
                history
            })
            .collect();
        let parameters = fit(&cards, &LearnerDay::default()).unwrap();
        assert_eq!(parameters.len(), 21);
        assert!(parameters.iter().all(|p| p.is_finite()));
        assert!(Scheduler::new(&parameters, 0.9, 8).is_ok());
    }

    #[test]
    fn the_fit_counts_the_learners_days_as_the_scheduler_does() {
        // 23:00 and 09:00 the next morning in Los Angeles: one UTC day, two learner days.
        let la = crate::learn::day::tests::los_angeles();
        let evening = 1_796_194_800_000; // 2026-12-02T07:00:00Z
        let morning = evening + 10 * 3_600_000;
        let card = vec![(Rating::Again, evening), (Rating::Good, morning)];
        assert_eq!(items(std::slice::from_ref(&card), &LearnerDay::default()).len(), 0, "one UTC day: no item");
        let by_learner = items(&[card], &la);
        assert_eq!(by_learner.len(), 1);
        assert_eq!(by_learner[0].reviews[1].delta_t, la.elapsed_days(evening, morning));
        assert_eq!(by_learner[0].reviews[1].delta_t, 1);
    }
}
