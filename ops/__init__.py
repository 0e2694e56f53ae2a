"""Operations tooling: running the app under gunicorn, and fault runs (``python -m ops.faults``)."""
