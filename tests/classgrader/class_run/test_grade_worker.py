"""grade_worker: workers' gradebook connections never overlap (one SQLite file, many writers)."""
import itertools
import subprocess
import sys

from coursekit import tool_env

HOLD = """
import sys, time
from classgrader.class_run import grade_worker
from nbgrader import api
url = sys.argv[1]
grade_worker._lock_gradebook(url)
gradebook = api.Gradebook(url)
opened = time.time()
time.sleep(0.5)
gradebook.add_student("s" + sys.argv[2])  # a write, inside the lock
gradebook.db.commit()
gradebook.close()
print(opened, time.time())
"""


def test_gradebook_connections_take_turns(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    runs = [subprocess.Popen([sys.executable, "-c", HOLD, url, str(n)], stdout=subprocess.PIPE, text=True,
                             env=tool_env())
            for n in range(3)]
    spans = sorted(tuple(map(float, run.communicate(timeout=60)[0].split())) for run in runs)
    assert all(run.returncode == 0 for run in runs)
    for (_, first_closed), (second_opened, _) in itertools.pairwise(spans):
        assert second_opened >= first_closed, f"two gradebook connections overlapped: {spans}"
    from nbgrader.api import Gradebook
    with Gradebook(url) as gradebook:
        assert sorted(s.id for s in gradebook.students) == ["s0", "s1", "s2"]


def test_nbgraders_one_use_of_jsonschema_is_validate():
    """The worker stands in for nbgrader's jsonschema module with an object that has `validate` only:
    an nbgrader that used more of it would fail here, not in a class run."""
    import inspect
    import re

    from nbgrader.nbgraderformat import common
    used = set(re.findall(r"\bjsonschema\.(\w+)", inspect.getsource(common)))
    assert used == {"validate"}, f"nbgrader's metadata validator uses jsonschema.{sorted(used)}"


def test_metadata_checked_with_the_schema_checked_once_as_jsonschema_would(monkeypatch):
    import jsonschema
    import pytest
    from nbformat.v4 import new_code_cell, new_notebook
    from nbgrader.nbgraderformat import MetadataValidator, common

    from classgrader.class_run import grade_worker
    monkeypatch.setattr(common, "jsonschema", jsonschema)  # put back after the test
    kind, checked = jsonschema.validators.validator_for(MetadataValidator().schema), []
    check = kind.check_schema
    monkeypatch.setattr(kind, "check_schema", lambda schema: checked.append(schema) or check(schema))
    grade_worker.check_metadata_schema_once()
    grade_worker.check_metadata_schema_once()  # twice: still one stand-in, not one around another
    assert type(common.jsonschema).__name__ == "_SchemaCheckedOnce"

    def cell(**nbgrader):
        return new_code_cell("x = 1", metadata={"nbgrader": {"schema_version": 3, "grade_id": "q1", "locked": False,
                                                             "solution": True, "grade": False, "task": False,
                                                             **nbgrader}})
    MetadataValidator().validate_nb(new_notebook(cells=[cell(), cell(grade_id="q2"), cell(grade_id="q3")]))
    assert len(checked) == 1, "the schema was checked more than once"
    wrong = cell(grade=True, points="two")
    with pytest.raises(jsonschema.ValidationError) as ours:
        MetadataValidator().validate_nb(new_notebook(cells=[wrong]))
    with pytest.raises(jsonschema.ValidationError) as stock:
        jsonschema.validate(wrong.metadata["nbgrader"], MetadataValidator().schema)
    assert ours.value.message == stock.value.message, (ours.value.message, stock.value.message)
