"""Seed every random source graded code may touch, so a grading run repeats exactly."""
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    """Seed Python's random, NumPy and torch (every device torch knows about)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds CUDA and MPS generators when present
