"""What the instructor's own commands run (`./course generate`, `report`, `export`, `bundle`...),
in the instructor's process or in the nbgrader command it starts: the course's settings
(course.py), the steps nbgrader runs when it generates, exports or writes feedback, and the
class report. The command table itself is classgrader/cli.py."""
