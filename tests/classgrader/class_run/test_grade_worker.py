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
