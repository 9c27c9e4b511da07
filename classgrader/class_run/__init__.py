"""The class run (`./course autograde ID`) and its grade workers: triage of the submissions,
one worker per shard with a watchdog and a memory limit each, nbgrader's autograde in each
worker, the flags and outcomes it records, and the progress the workers report back."""
