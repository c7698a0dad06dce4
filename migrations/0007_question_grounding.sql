-- Where each question's code comes from in the session's files (issue 16, SPEC §6.4).
--
-- `grounding_kind` NULL: the question shows no code of the session (every row stored before
-- this migration, a catalogue example, a question about concepts only). Otherwise the file
-- (the captured path, as the analysis saw it), the 1-based inclusive line range its snippet
-- covers, and how the snippet relates to those lines: 'quote', 'blank' (the answer restores
-- the line) or 'mutation' (`grounding_mutation` is the one edited line as JSON
-- {"line", "original", "mutated"}; reverting it restores the file).
ALTER TABLE questions ADD COLUMN grounding_kind TEXT CHECK (grounding_kind IN ('quote', 'blank', 'mutation'));
ALTER TABLE questions ADD COLUMN grounding_file TEXT;
ALTER TABLE questions ADD COLUMN grounding_line_start INTEGER;
ALTER TABLE questions ADD COLUMN grounding_line_end INTEGER;
ALTER TABLE questions ADD COLUMN grounding_mutation TEXT;
