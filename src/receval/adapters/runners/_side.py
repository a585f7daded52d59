"""Side inputs for the beyond-accuracy parity runners, read from IN_DIR (written by
tests/parity/test_parity_beyond.py): train.parquet (user_id, item_id), baseline.parquet
(user_id, item_id, score, rank: a second run), categories.parquet (item_id, category: one
category per item). Never imports receval."""
from pathlib import Path

import pandas as pd


def load_side(in_dir):
    d = Path(in_dir)
    train = pd.read_parquet(d / "train.parquet").astype({"user_id": "int64", "item_id": "int64"})
    base = pd.read_parquet(d / "baseline.parquet").astype({"user_id": "int64", "item_id": "int64", "score": "float64", "rank": "int64"})
    cats = pd.read_parquet(d / "categories.parquet").astype({"item_id": "int64"})
    return train, base, cats
