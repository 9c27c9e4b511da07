"""Who wrote the same code: similarity between the students of a class, for the instructor's review.

    submitted notebooks --student_code--> what each student wrote, per answer cell
                        --fingerprints--> copydetect's winnowed k-gram hashes of it, less the release's own
                        --pairs-------->  every pair of students, scored by what they share that few others do
                        --page--------->  runtime/reports/similarity-ID.html: the ranked pairs, side by side

It never changes a score and never flags a student: it ranks pairs for a human to read
(classgrader/commands/similarity.py is the command; docs/similarity.md says how to read it)."""
