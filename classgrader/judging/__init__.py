"""The judge, in the grade worker: it runs a notebook cell by cell in a sandboxed kernel, judges
tests outside the kernel over data the kernel answers with, and re-checks what the kernel
recorded against the grader's own run of the solution. It speaks to the kernel through
classgrader.in_kernel.protocol, the one module both ends import."""
