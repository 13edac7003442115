"""Evaluation: the verification protocol on insightface ``.bin`` sets (``bin_set``, ``verification``,
``validation``) and IJB-B/C (``ijb``, ``face_align``, ``roc``)."""
