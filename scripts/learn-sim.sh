#!/usr/bin/env bash
# The learning simulation (issue 34; docs/LEARNING.md): a simulated learner whose memory follows
# FSRS's default model takes the sample session's deck through the real `vl quiz next|answer
# --json` once a day for DAYS days (45 by default) in America/Los_Angeles, each call's clock set
# by the debug build's VIBELEARN_DEBUG_NOW_MS (a release build has no such setting). Prints the
# tables: true recall; each day's new cards, learning steps, reviews and all answers; the day
# each concept became mastered; the calibration of the product's recall-now against the
# learner's true recall. A ten-day run is in the test suite
# (quiz::sim). Usage: scripts/learn-sim.sh [DAYS] [NEW_PER_DAY] (the new-card cap; the
# product's default when left out)
set -euo pipefail
cd "$(dirname "$0")/.."
LEARN_SIM_DAYS="${1:-45}" LEARN_SIM_NEW_PER_DAY="${2:-}" cargo test --locked --test tests quiz::sim::learning_simulation_benchmark \
    -- --ignored --nocapture --exact 2>&1 | sed -n '/^Learning simulation/,/^answers per day/p'
