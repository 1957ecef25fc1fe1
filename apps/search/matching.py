"""Semantic closeness of a query to a few given texts (not the index).

For texts that are deliberately not in the index — records tombstoned at the user's
request — a caller may still need to know whether one of them is what a query is about,
without ever showing it. The texts are embedded as passages and compared to the query by
cosine similarity in the model's own space (`raw`): the floor the caller compares
against was measured there (bench/forget_match.py), and the language debiasing of recall
would move every score.
"""

from __future__ import annotations

import numpy as np

from apps.search import embedding

EmbeddingUnavailable = embedding.EmbeddingUnavailable


def similarities(query: str, texts: list[str]) -> list[float]:
    """Cosine similarity of `query` (as a query) to each text (as a passage), in order.
    Raises EmbeddingUnavailable when the model cannot be loaded."""
    if not texts:
        return []
    q = embedding.embed([query], kind=embedding.QUERY, raw=True)[0]
    passages = embedding.embed(texts, kind=embedding.PASSAGE, raw=True)
    return [float(x) for x in np.asarray(passages @ q, dtype=np.float64)]


def topic_vectors(texts: list[str]) -> list[list[float]]:
    """Vectors that put texts about one topic close together, whatever their language, for
    grouping a few texts (a scene block's members), not for the index: each text embedded
    as a query (e5's query side weighs what a text is about: bench/l2_grouping.py groups
    hand-labelled topics better with it than with passage vectors) in the debiased space,
    where a Chinese and an English sentence on one topic are close. Raises
    EmbeddingUnavailable when the model cannot be loaded."""
    if not texts:
        return []
    vectors = embedding.embed(texts, kind=embedding.QUERY)
    return [[float(x) for x in row] for row in np.asarray(vectors, dtype=np.float64)]
