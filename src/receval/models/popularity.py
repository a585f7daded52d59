r"""Most-popular baseline.

The score of item :math:`i` is its number of train interactions,

.. math::  s_{u,i} = |\{(v, i) \in \mathrm{train}\}| ,

the same for every user (repeated user–item pairs count every time).
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["Popularity"]


class Popularity:
    """Recommend the items with the most train interactions.

    Attributes
    ----------
    item_ids_ : numpy.ndarray
        Sorted train item ids.
    counts_ : numpy.ndarray
        float64 interaction count of each item in ``item_ids_``.
    user_ids_ : numpy.ndarray
        Sorted train user ids.

    Examples
    --------
    >>> train = pl.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [10, 20, 20, 30]})
    >>> scores, items = Popularity().fit(train).score([1, 9])
    >>> items, scores
    (array([10, 20, 30]), array([[1., 2., 1.],
           [1., 2., 1.]]))
    """

    def __repr__(self) -> str:
        return "Popularity()"

    def fit(self, train: pl.DataFrame) -> Popularity:
        """Count the train interactions of each item; returns ``self``."""
        if "item_id" not in train.columns or "user_id" not in train.columns:
            raise ValueError("train frame needs 'user_id' and 'item_id' columns; load it with receval.data loaders")
        if train.height == 0:
            raise ValueError("train frame is empty; a model needs at least one interaction")
        self.item_ids_, counts = np.unique(train["item_id"].to_numpy(), return_counts=True)
        self.counts_ = counts.astype(np.float64)
        self.user_ids_ = np.unique(train["user_id"].to_numpy())
        return self

    def score(self, user_ids) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(scores, item_ids)``; every row equals :attr:`counts_`.

        ``scores`` is a read-only broadcast view of shape
        ``(len(user_ids), n_items)`` (no memory per user).
        """
        if not hasattr(self, "counts_"):
            raise ValueError("Popularity is not fitted; call model.fit(train) first")
        users = np.asarray(user_ids).ravel()
        return np.broadcast_to(self.counts_, (len(users), len(self.counts_))), self.item_ids_
