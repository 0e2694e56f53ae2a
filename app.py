"""`flask --app app run` or `python app.py`: the app on the configured database."""

from sota_casino.config import LOCAL_HOSTS
from sota_casino.factory import app_from_environment

app = app_from_environment()

if __name__ == "__main__":
    # Served on this computer only, so answering for its own names only, unless told others.
    app.config["TRUSTED_HOSTS"] = app.config["TRUSTED_HOSTS"] or list(LOCAL_HOSTS)
    app.run(host="127.0.0.1", port=app.config["PORT"])
