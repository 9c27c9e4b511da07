"""Grading kernels and their confinement, grader side: the zygote that forks every kernel,
the relay to each, the kept kernels, the sandbox a kernel enters before any student code runs,
its memory cgroup and the accelerator it may be given."""
