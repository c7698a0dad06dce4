-- A question's answers by question (issue 41): the follow-up lookup inside an answer's write
-- transaction ("has this follow-up been answered?"), the quiz job's `delete_stale` and its read
-- of the grounded questions, and the cascade when a question is deleted all look attempts up by
-- `question_id`; without an index each of them read the whole table, every answer ever given.
CREATE INDEX quiz_attempts_question ON quiz_attempts (question_id);

-- Follow-ups inserted before issue 41 copied their parent's tags, a leech's `leech` (and a
-- re-teaching question's `reteach`) among them, so `vl quiz --leeches` listed them and
-- `vl status` counted them. A follow-up never lapses (it is a reflection prompt, or a card
-- with its own answer and its own lapses), so one with no lapse of its own is no leech.
UPDATE questions
   SET tags = (SELECT json_group_array(t.value) FROM json_each(questions.tags) t
               WHERE t.value NOT IN ('leech', 'reteach'))
 WHERE parent_question_id IS NOT NULL AND lapses = 0 AND json_valid(tags)
   AND EXISTS (SELECT 1 FROM json_each(questions.tags) t WHERE t.value IN ('leech', 'reteach'));
